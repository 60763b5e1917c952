define void @split_sum(ptr noalias %0, ptr noalias %1, i64 %2, i64 %3, i64 %4, i64 %5) #0 {
entry:
  %6 = getelementptr inbounds i64, ptr %0, i64 0
  %7 = load i64, ptr %6, align 4
  %8 = getelementptr inbounds i64, ptr %0, i64 1
  %9 = load i64, ptr %8, align 4
  %10 = getelementptr inbounds i64, ptr %0, i64 2
  %11 = load i64, ptr %10, align 4
  %12 = getelementptr inbounds ptr, ptr %1, i64 0
  %13 = load ptr, ptr %12, align 8
  %14 = getelementptr inbounds i64, ptr %0, i64 3
  %15 = load i64, ptr %14, align 4
  %16 = getelementptr inbounds i64, ptr %0, i64 4
  %17 = load i64, ptr %16, align 4
  %18 = getelementptr inbounds ptr, ptr %1, i64 1
  %19 = load ptr, ptr %18, align 8
  %20 = icmp slt i64 %2, %3
  br i1 %20, label %row, label %row.exit
row:                                              ; preds = %col.exit, %entry
  %row.i = phi i64 [ %2, %entry ], [ %37, %col.exit ]
  %21 = icmp slt i64 %4, %5
  br i1 %21, label %col, label %col.exit
row.exit:                                         ; preds = %col.exit, %entry
  ret void
col:                                              ; preds = %col, %row
  %col.i = phi i64 [ %4, %row ], [ %33, %col ]
  %22 = phi float [ 0.000000e+00, %row ], [ %32, %col ]
  %23 = mul i64 %col.i, 1
  %24 = add i64 %9, %23
  %25 = mul i64 %col.i, 0
  %26 = add i64 %15, %25
  %27 = mul i64 0, %7
  %28 = add i64 %27, %col.i
  %29 = getelementptr float, ptr %13, i64 %24
  %30 = load float, ptr %29, align 4
  %31 = fmul float %30, %30
  %32 = fadd reassoc float %22, %31
  %33 = add i64 %col.i, 1
  %34 = icmp slt i64 %33, %5
  br i1 %34, label %col, label %col.exit
col.exit:                                         ; preds = %col, %row
  %35 = phi float [ 0.000000e+00, %row ], [ %32, %col ]
  %36 = getelementptr float, ptr %19, i64 %15
  store float %35, ptr %36, align 4
  %37 = add i64 %row.i, 1
  %38 = icmp slt i64 %37, %3
  br i1 %38, label %row, label %row.exit
}
define void @split_sum_part(ptr noalias %0, ptr noalias %1, i64 %2, i64 %3, i64 %4, i64 %5, ptr noalias %6, ptr noalias %7) #0 {
entry:
  %8 = getelementptr inbounds i64, ptr %0, i64 0
  %9 = load i64, ptr %8, align 4
  %10 = getelementptr inbounds i64, ptr %0, i64 1
  %11 = load i64, ptr %10, align 4
  %12 = getelementptr inbounds i64, ptr %0, i64 2
  %13 = load i64, ptr %12, align 4
  %14 = getelementptr inbounds ptr, ptr %1, i64 0
  %15 = load ptr, ptr %14, align 8
  %16 = getelementptr inbounds i64, ptr %0, i64 3
  %17 = load i64, ptr %16, align 4
  %18 = getelementptr inbounds i64, ptr %0, i64 4
  %19 = load i64, ptr %18, align 4
  %20 = getelementptr inbounds ptr, ptr %1, i64 1
  %21 = load ptr, ptr %20, align 8
  switch i64 %5, label %done [
    i64 0, label %level0
  ]
done:                                             ; preds = %entry
  ret void
level0:                                           ; preds = %entry
  %22 = icmp slt i64 %3, %4
  br i1 %22, label %col, label %col.exit
col:                                              ; preds = %col, %level0
  %col.i = phi i64 [ %3, %level0 ], [ %34, %col ]
  %23 = phi float [ 0.000000e+00, %level0 ], [ %33, %col ]
  %24 = mul i64 %col.i, 1
  %25 = add i64 %11, %24
  %26 = mul i64 %col.i, 0
  %27 = add i64 %17, %26
  %28 = mul i64 0, %9
  %29 = add i64 %28, %col.i
  %30 = getelementptr float, ptr %15, i64 %25
  %31 = load float, ptr %30, align 4
  %32 = fmul float %31, %31
  %33 = fadd reassoc float %23, %32
  %34 = add i64 %col.i, 1
  %35 = icmp slt i64 %34, %4
  br i1 %35, label %col, label %col.exit
col.exit:                                         ; preds = %col, %level0
  %36 = phi float [ 0.000000e+00, %level0 ], [ %33, %col ]
  %37 = getelementptr inbounds i8, ptr %7, i64 0
  store float %36, ptr %37, align 4
  ret void
}
define void @split_sum_comb(i64 %0, ptr noalias %1, i64 %2, ptr noalias %3) #0 {
entry:
  switch i64 %0, label %done [
    i64 0, label %level0
  ]
done:                                             ; preds = %entry
  ret void
level0:                                           ; preds = %entry
  %4 = getelementptr inbounds i8, ptr %1, i64 0
  %5 = load float, ptr %4, align 4
  %6 = icmp slt i64 1, %2
  br i1 %6, label %part, label %part.exit
part:                                             ; preds = %part, %level0
  %part.i = phi i64 [ 1, %level0 ], [ %13, %part ]
  %7 = phi float [ %5, %level0 ], [ %12, %part ]
  %8 = mul i64 %part.i, 16
  %9 = getelementptr i8, ptr %1, i64 %8
  %10 = getelementptr inbounds i8, ptr %9, i64 0
  %11 = load float, ptr %10, align 4
  %12 = fadd float %7, %11
  %13 = add i64 %part.i, 1
  %14 = icmp slt i64 %13, %2
  br i1 %14, label %part, label %part.exit, !llvm.loop !0
part.exit:                                        ; preds = %part, %level0
  %15 = phi float [ %5, %level0 ], [ %12, %part ]
  %16 = getelementptr inbounds i8, ptr %3, i64 0
  store float %15, ptr %16, align 4
  ret void
}
define void @split_sum_fin(ptr noalias %0, ptr noalias %1, i64 %2, ptr noalias %3) #0 {
entry:
  %4 = getelementptr inbounds i64, ptr %0, i64 0
  %5 = load i64, ptr %4, align 4
  %6 = getelementptr inbounds i64, ptr %0, i64 1
  %7 = load i64, ptr %6, align 4
  %8 = getelementptr inbounds i64, ptr %0, i64 2
  %9 = load i64, ptr %8, align 4
  %10 = getelementptr inbounds ptr, ptr %1, i64 0
  %11 = load ptr, ptr %10, align 8
  %12 = getelementptr inbounds i64, ptr %0, i64 3
  %13 = load i64, ptr %12, align 4
  %14 = getelementptr inbounds i64, ptr %0, i64 4
  %15 = load i64, ptr %14, align 4
  %16 = getelementptr inbounds ptr, ptr %1, i64 1
  %17 = load ptr, ptr %16, align 8
  %18 = getelementptr inbounds i8, ptr %3, i64 0
  %19 = load float, ptr %18, align 4
  %20 = getelementptr float, ptr %17, i64 %13
  store float %19, ptr %20, align 4
  ret void
}
