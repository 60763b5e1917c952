define void @scan_fused(ptr noalias %0, ptr noalias %1, i64 %2, i64 %3, i64 %4, i64 %5) #0 {
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
  %row.i = phi i64 [ %2, %entry ], [ %67, %col.exit ]
  %37 = mul i64 %row.i, %13
  %38 = add i64 %11, %37
  %39 = mul i64 %row.i, %21
  %40 = add i64 %19, %39
  %41 = mul i64 %row.i, %29
  %42 = add i64 %27, %41
  %43 = icmp slt i64 %4, %5
  br i1 %43, label %col, label %col.exit
row.exit:                                         ; preds = %col.exit, %entry
  ret void
col:                                              ; preds = %col, %row
  %col.i = phi i64 [ %4, %row ], [ %64, %col ]
  %44 = phi float [ 0.000000e+00, %row ], [ %59, %col ]
  %45 = mul i64 %col.i, 1
  %46 = add i64 %38, %45
  %47 = mul i64 %col.i, 1
  %48 = add i64 %40, %47
  %49 = mul i64 %col.i, 1
  %50 = add i64 %42, %49
  %51 = mul i64 0, %9
  %52 = add i64 %51, %col.i
  %53 = getelementptr float, ptr %17, i64 %46
  %54 = load float, ptr %53, align 4
  %55 = call float @lf.exp.f32(float %54)
  %56 = bitcast i64 %35 to double
  %57 = fptrunc double %56 to float
  %58 = fmul float %55, %57
  %59 = fadd float %44, %58
  %60 = getelementptr float, ptr %25, i64 %48
  %61 = load float, ptr %60, align 4
  %62 = fadd float %59, %61
  %63 = getelementptr float, ptr %33, i64 %50
  store float %62, ptr %63, align 4
  %64 = add i64 %col.i, 1
  %65 = icmp slt i64 %64, %5
  br i1 %65, label %col, label %col.exit, !llvm.loop !0
col.exit:                                         ; preds = %col, %row
  %66 = phi float [ 0.000000e+00, %row ], [ %59, %col ]
  %67 = add i64 %row.i, 1
  %68 = icmp slt i64 %67, %3
  br i1 %68, label %row, label %row.exit
}
define internal float @lf.exp.f32(float %0) #1 {
entry:
  %1 = fcmp olt float %0, -1.040000e+02
  %2 = select i1 %1, float -1.040000e+02, float %0
  %3 = fcmp ogt float %2, 8.900000e+01
  %4 = select i1 %3, float 8.900000e+01, float %2
  %5 = call float @llvm.fma.f32(float %4, float 0x3FF7154760000000, float 0x4168000000000000)
  %6 = fsub float %5, 0x4168000000000000
  %7 = call float @llvm.fma.f32(float %6, float 0xBFE62E4000000000, float %4)
  %8 = call float @llvm.fma.f32(float %6, float 0xBEB7F7D1C0000000, float %7)
  %9 = bitcast float %5 to i32
  %10 = sub i32 %9, 1262485504
  %11 = call float @llvm.fma.f32(float 0x3F56AE7100000000, float %8, float 0x3F81267A40000000)
  %12 = call float @llvm.fma.f32(float %11, float %8, float 0x3FA5558220000000)
  %13 = call float @llvm.fma.f32(float %12, float %8, float 0x3FC55541A0000000)
  %14 = call float @llvm.fma.f32(float %13, float %8, float 0x3FDFFFFFC0000000)
  %15 = call float @llvm.fma.f32(float %14, float %8, float 1.000000e+00)
  %16 = call float @llvm.fma.f32(float %15, float %8, float 1.000000e+00)
  %17 = ashr i32 %10, 1
  %18 = sub i32 %10, %17
  %19 = add i32 %18, 127
  %20 = shl i32 %19, 23
  %21 = bitcast i32 %20 to float
  %22 = add i32 %17, 127
  %23 = shl i32 %22, 23
  %24 = bitcast i32 %23 to float
  %25 = fmul float %16, %24
  %26 = fmul float %25, %21
  ret float %26
}
declare float @llvm.fma.f32(float, float, float) #2
