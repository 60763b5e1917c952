define void @row_softmax(ptr noalias %0, ptr noalias %1, i64 %2, i64 %3, i64 %4, i64 %5) #0 {
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
  %26 = icmp slt i64 %2, %3
  br i1 %26, label %row, label %row.exit
row:                                              ; preds = %divdone, %entry
  %row.i = phi i64 [ %2, %entry ], [ %78, %divdone ]
  %27 = mul i64 %row.i, %13
  %28 = add i64 %11, %27
  %29 = mul i64 %row.i, %21
  %30 = add i64 %19, %29
  %31 = icmp slt i64 %4, %5
  br i1 %31, label %col, label %col.exit
row.exit:                                         ; preds = %divdone, %entry
  ret void
col:                                              ; preds = %col, %row
  %col.i = phi i64 [ %4, %row ], [ %42, %col ]
  %32 = phi float [ 0xFFF0000000000000, %row ], [ %41, %col ]
  %33 = mul i64 %col.i, 1
  %34 = add i64 %28, %33
  %35 = mul i64 %col.i, 1
  %36 = add i64 %30, %35
  %37 = mul i64 0, %9
  %38 = add i64 %37, %col.i
  %39 = getelementptr float, ptr %17, i64 %34
  %40 = load float, ptr %39, align 4
  %41 = call float @llvm.maximum.f32(float %32, float %40)
  %42 = add i64 %col.i, 1
  %43 = icmp slt i64 %42, %5
  br i1 %43, label %col, label %col.exit
col.exit:                                         ; preds = %col, %row
  %44 = phi float [ 0xFFF0000000000000, %row ], [ %41, %col ]
  %45 = icmp slt i64 %4, %5
  br i1 %45, label %col1, label %col.exit2
col1:                                             ; preds = %col1, %col.exit
  %col.i3 = phi i64 [ %4, %col.exit ], [ %59, %col1 ]
  %46 = phi float [ 0.000000e+00, %col.exit ], [ %58, %col1 ]
  %47 = mul i64 %col.i3, 1
  %48 = add i64 %28, %47
  %49 = mul i64 %col.i3, 1
  %50 = add i64 %30, %49
  %51 = mul i64 0, %9
  %52 = add i64 %51, %col.i3
  %53 = getelementptr float, ptr %17, i64 %48
  %54 = load float, ptr %53, align 4
  %55 = fsub float %54, %44
  %56 = call float @lf.exp.f32(float %55)
  %57 = getelementptr float, ptr %25, i64 %50
  store float %56, ptr %57, align 4
  %58 = fadd reassoc float %46, %56
  %59 = add i64 %col.i3, 1
  %60 = icmp slt i64 %59, %5
  br i1 %60, label %col1, label %col.exit2
col.exit2:                                        ; preds = %col1, %col.exit
  %61 = phi float [ 0.000000e+00, %col.exit ], [ %58, %col1 ]
  %62 = bitcast float %61 to i32
  %63 = lshr i32 %62, 23
  %64 = and i32 %63, 255
  %65 = sub i32 254, %64
  %66 = shl i32 %65, 23
  %67 = bitcast i32 %66 to float
  %68 = fmul float %61, %67
  %69 = fdiv float 1.000000e+00, %68
  %70 = fmul float %67, 0x3BF0000000000000
  %71 = call float @llvm.fabs.f32(float %61)
  %72 = fcmp ole float %71, 0x43F0000000000000
  %73 = fcmp oge float %71, 0x3BF0000000000000
  %74 = and i1 %73, %72
  %75 = and i1 true, %74
  br i1 %75, label %fastdiv, label %slowdiv
fastdiv:                                          ; preds = %col.exit2
  %76 = icmp slt i64 %4, %5
  br i1 %76, label %col4, label %col.exit5
slowdiv:                                          ; preds = %col.exit2
  %77 = icmp slt i64 %4, %5
  br i1 %77, label %col7, label %col.exit8
divdone:                                          ; preds = %col.exit8, %col.exit5
  %78 = add i64 %row.i, 1
  %79 = icmp slt i64 %78, %3
  br i1 %79, label %row, label %row.exit
col4:                                             ; preds = %col4, %fastdiv
  %col.i6 = phi i64 [ %4, %fastdiv ], [ %103, %col4 ]
  %80 = mul i64 %col.i6, 1
  %81 = add i64 %28, %80
  %82 = mul i64 %col.i6, 1
  %83 = add i64 %30, %82
  %84 = mul i64 0, %9
  %85 = add i64 %84, %col.i6
  %86 = getelementptr float, ptr %25, i64 %83
  %87 = load float, ptr %86, align 4
  %88 = bitcast float %87 to i32
  %89 = and i32 %88, 2147483647
  %90 = sub i32 %89, 1
  %91 = icmp ult i32 %90, 2139095039
  %92 = icmp ult i32 %89, 226492416
  %93 = fmul float %87, 0x43F0000000000000
  %94 = select i1 %92, float %93, float %87
  %95 = fmul float %94, %69
  %96 = fneg float %95
  %97 = call float @llvm.fma.f32(float %96, float %68, float %94)
  %98 = call float @llvm.fma.f32(float %97, float %69, float %95)
  %99 = select i1 %92, float %70, float %67
  %100 = select i1 %91, float %98, float %95
  %101 = fmul float %100, %99
  %102 = getelementptr float, ptr %25, i64 %83
  store float %101, ptr %102, align 4
  %103 = add i64 %col.i6, 1
  %104 = icmp slt i64 %103, %5
  br i1 %104, label %col4, label %col.exit5
col.exit5:                                        ; preds = %col4, %fastdiv
  br label %divdone
col7:                                             ; preds = %col7, %slowdiv
  %col.i9 = phi i64 [ %4, %slowdiv ], [ %115, %col7 ]
  %105 = mul i64 %col.i9, 1
  %106 = add i64 %28, %105
  %107 = mul i64 %col.i9, 1
  %108 = add i64 %30, %107
  %109 = mul i64 0, %9
  %110 = add i64 %109, %col.i9
  %111 = getelementptr float, ptr %25, i64 %108
  %112 = load float, ptr %111, align 4
  %113 = fdiv float %112, %61
  %114 = getelementptr float, ptr %25, i64 %108
  store float %113, ptr %114, align 4
  %115 = add i64 %col.i9, 1
  %116 = icmp slt i64 %115, %5
  br i1 %116, label %col7, label %col.exit8
col.exit8:                                        ; preds = %col7, %slowdiv
  br label %divdone
}
declare float @llvm.maximum.f32(float, float) #1
define internal float @lf.exp.f32(float %0) #2 {
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
declare float @llvm.fma.f32(float, float, float) #1
declare float @llvm.fabs.f32(float) #1
