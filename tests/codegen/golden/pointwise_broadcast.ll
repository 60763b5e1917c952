define void @pointwise_broadcast(ptr noalias %0, ptr noalias %1, i64 %2, i64 %3, i64 %4, i64 %5) #0 {
entry:
  %6 = getelementptr inbounds i64, ptr %0, i64 0
  %7 = load i64, ptr %6, align 4
  %8 = getelementptr inbounds i64, ptr %0, i64 1
  %9 = load i64, ptr %8, align 4
  %10 = getelementptr inbounds i64, ptr %0, i64 2
  %11 = load i64, ptr %10, align 4
  %12 = getelementptr inbounds i64, ptr %0, i64 3
  %13 = load i64, ptr %12, align 4
  %14 = getelementptr inbounds i64, ptr %0, i64 4
  %15 = load i64, ptr %14, align 4
  %16 = getelementptr inbounds ptr, ptr %1, i64 0
  %17 = load ptr, ptr %16, align 8
  %18 = getelementptr inbounds i64, ptr %0, i64 5
  %19 = load i64, ptr %18, align 4
  %20 = getelementptr inbounds i64, ptr %0, i64 6
  %21 = load i64, ptr %20, align 4
  %22 = getelementptr inbounds i64, ptr %0, i64 7
  %23 = load i64, ptr %22, align 4
  %24 = getelementptr inbounds ptr, ptr %1, i64 1
  %25 = load ptr, ptr %24, align 8
  %26 = getelementptr inbounds i64, ptr %0, i64 8
  %27 = load i64, ptr %26, align 4
  %28 = getelementptr inbounds i64, ptr %0, i64 9
  %29 = load i64, ptr %28, align 4
  %30 = getelementptr inbounds i64, ptr %0, i64 10
  %31 = load i64, ptr %30, align 4
  %32 = getelementptr inbounds ptr, ptr %1, i64 2
  %33 = load ptr, ptr %32, align 8
  %34 = getelementptr inbounds i64, ptr %0, i64 11
  %35 = load i64, ptr %34, align 4
  %36 = icmp slt i64 %2, %3
  br i1 %36, label %row, label %row.exit
row:                                              ; preds = %col.exit, %entry
  %row.i = phi i64 [ %2, %entry ], [ %65, %col.exit ]
  %37 = mul i64 %row.i, %13
  %38 = add i64 %11, %37
  %39 = mul i64 %row.i, 0
  %40 = add i64 %19, %39
  %41 = mul i64 %row.i, %29
  %42 = add i64 %27, %41
  %43 = icmp slt i64 %4, %5
  br i1 %43, label %col, label %col.exit
row.exit:                                         ; preds = %col.exit, %entry
  ret void
col:                                              ; preds = %col, %row
  %col.i = phi i64 [ %4, %row ], [ %63, %col ]
  %44 = mul i64 %col.i, 1
  %45 = add i64 %38, %44
  %46 = mul i64 %col.i, 1
  %47 = add i64 %40, %46
  %48 = mul i64 %col.i, 1
  %49 = add i64 %42, %48
  %50 = mul i64 0, %9
  %51 = add i64 %50, %col.i
  %52 = getelementptr float, ptr %17, i64 %45
  %53 = load float, ptr %52, align 4
  %54 = bitcast i64 %35 to double
  %55 = fptrunc double %54 to float
  %56 = fmul float %53, %55
  %57 = getelementptr float, ptr %25, i64 %47
  %58 = load float, ptr %57, align 4
  %59 = fadd float %56, %58
  %60 = fcmp olt float %59, 0.000000e+00
  %61 = select i1 %60, float 0.000000e+00, float %59
  %62 = getelementptr float, ptr %33, i64 %49
  store float %61, ptr %62, align 4
  %63 = add i64 %col.i, 1
  %64 = icmp slt i64 %63, %5
  br i1 %64, label %col, label %col.exit
col.exit:                                         ; preds = %col, %row
  %65 = add i64 %row.i, 1
  %66 = icmp slt i64 %65, %3
  br i1 %66, label %row, label %row.exit
}
