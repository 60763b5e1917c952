define void @matmul_epilogue(ptr noalias %0, ptr noalias %1, i64 %2, i64 %3, i64 %4, i64 %5) #0 {
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
  %36 = getelementptr inbounds i64, ptr %0, i64 12
  %37 = load i64, ptr %36, align 4
  %38 = getelementptr inbounds i64, ptr %0, i64 13
  %39 = load i64, ptr %38, align 4
  %40 = getelementptr inbounds ptr, ptr %1, i64 3
  %41 = load ptr, ptr %40, align 8
  %42 = icmp slt i64 %2, %3
  br i1 %42, label %row, label %row.exit
row:                                              ; preds = %col.exit, %entry
  %row.i = phi i64 [ %2, %entry ], [ %78, %col.exit ]
  %43 = mul i64 %row.i, %13
  %44 = add i64 %11, %43
  %45 = mul i64 %row.i, 0
  %46 = add i64 %19, %45
  %47 = mul i64 %row.i, %29
  %48 = add i64 %27, %47
  %49 = mul i64 %row.i, %37
  %50 = add i64 %35, %49
  %51 = icmp slt i64 %4, %5
  br i1 %51, label %col, label %col.exit
row.exit:                                         ; preds = %col.exit, %entry
  ret void
col:                                              ; preds = %col, %row
  %col.i = phi i64 [ %4, %row ], [ %76, %col ]
  %52 = mul i64 %col.i, 1
  %53 = add i64 %44, %52
  %54 = mul i64 %col.i, 1
  %55 = add i64 %46, %54
  %56 = mul i64 %col.i, 1
  %57 = add i64 %48, %56
  %58 = mul i64 %col.i, 1
  %59 = add i64 %50, %58
  %60 = mul i64 0, %9
  %61 = add i64 %60, %col.i
  %62 = getelementptr float, ptr %17, i64 %53
  %63 = load float, ptr %62, align 4
  %64 = getelementptr float, ptr %25, i64 %55
  %65 = load float, ptr %64, align 4
  %66 = fadd float %63, %65
  %67 = fmul float %66, 0x3FE6A09E60000000
  %68 = call float @lf.erf.f32(float %67)
  %69 = fadd float 1.000000e+00, %68
  %70 = fmul float 5.000000e-01, %66
  %71 = fmul float %70, %69
  %72 = getelementptr float, ptr %33, i64 %57
  %73 = load float, ptr %72, align 4
  %74 = fadd float %71, %73
  %75 = getelementptr float, ptr %41, i64 %59
  store float %74, ptr %75, align 4
  %76 = add i64 %col.i, 1
  %77 = icmp slt i64 %76, %5
  br i1 %77, label %col, label %col.exit
col.exit:                                         ; preds = %col, %row
  %78 = add i64 %row.i, 1
  %79 = icmp slt i64 %78, %3
  br i1 %79, label %row, label %row.exit
}
define internal float @lf.erf.f32(float %0) #1 {
entry:
  %1 = call float @llvm.fabs.f32(float %0)
  %2 = fmul float %1, %1
  %3 = call float @llvm.fma.f32(float 0x3F15F11440000000, float %2, float 0xBF4AAE9860000000)
  %4 = call float @llvm.fma.f32(float %3, float %2, float 0x3F754DAD80000000)
  %5 = call float @llvm.fma.f32(float %4, float %2, float 0xBF9B8107C0000000)
  %6 = call float @llvm.fma.f32(float %5, float %2, float 0x3FBCE2E200000000)
  %7 = call float @llvm.fma.f32(float %6, float %2, float 0xBFD8127440000000)
  %8 = call float @llvm.fma.f32(float %7, float %2, float 0x3FC06EBA80000000)
  %9 = call float @llvm.fma.f32(float %1, float %8, float %1)
  %10 = fcmp ogt float %1, 4.000000e+00
  %11 = select i1 %10, float 4.000000e+00, float %1
  %12 = fsub float %11, 0x4003B00000000000
  %13 = call float @llvm.fma.f32(float 0x3F20C73D60000000, float %12, float 0x3F338464A0000000)
  %14 = call float @llvm.fma.f32(float %13, float %12, float 0x3F462D62E0000000)
  %15 = call float @llvm.fma.f32(float %14, float %12, float 0xBF45A1CAA0000000)
  %16 = call float @llvm.fma.f32(float %15, float %12, float 0x3F63BB9D20000000)
  %17 = call float @llvm.fma.f32(float %16, float %12, float 0xBF81927280000000)
  %18 = call float @llvm.fma.f32(float %17, float %12, float 0x3F9A7B76E0000000)
  %19 = call float @llvm.fma.f32(float %18, float %12, float 0xBFB38A2320000000)
  %20 = call float @llvm.fma.f32(float %19, float %12, float 0x3FCB5C3040000000)
  %21 = fmul float %11, %11
  %22 = fneg float %21
  %23 = call float @llvm.fma.f32(float %22, float 0x3FF7154760000000, float 0x4168000000000000)
  %24 = fsub float %23, 0x4168000000000000
  %25 = call float @llvm.fma.f32(float %24, float 0xBFE62E4000000000, float %22)
  %26 = call float @llvm.fma.f32(float %24, float 0xBEB7F7D1C0000000, float %25)
  %27 = bitcast float %23 to i32
  %28 = sub i32 %27, 1262485504
  %29 = add i32 %28, 127
  %30 = shl i32 %29, 23
  %31 = bitcast i32 %30 to float
  %32 = call float @llvm.fma.f32(float 0x3F56AE7100000000, float %26, float 0x3F81267A40000000)
  %33 = call float @llvm.fma.f32(float %32, float %26, float 0x3FA5558220000000)
  %34 = call float @llvm.fma.f32(float %33, float %26, float 0x3FC55541A0000000)
  %35 = call float @llvm.fma.f32(float %34, float %26, float 0x3FDFFFFFC0000000)
  %36 = call float @llvm.fma.f32(float %35, float %26, float 1.000000e+00)
  %37 = call float @llvm.fma.f32(float %36, float %26, float 1.000000e+00)
  %38 = fmul float %37, %31
  %39 = fneg float %38
  %40 = call float @llvm.fma.f32(float %39, float %20, float 1.000000e+00)
  %41 = fcmp olt float %1, 9.218750e-01
  %42 = select i1 %41, float %9, float %40
  %43 = call float @llvm.copysign.f32(float %42, float %0)
  ret float %43
}
declare float @llvm.fabs.f32(float) #2
declare float @llvm.fma.f32(float, float, float) #2
declare float @llvm.copysign.f32(float, float) #2
