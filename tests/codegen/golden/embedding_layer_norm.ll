define void @embedding_layer_norm(ptr noalias %0, ptr noalias %1, i64 %2, i64 %3, i64 %4, i64 %5) #0 {
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
  %40 = getelementptr inbounds i64, ptr %0, i64 14
  %41 = load i64, ptr %40, align 4
  %42 = icmp slt i64 %2, %3
  br i1 %42, label %row, label %row.exit
row:                                              ; preds = %col.exit5, %entry
  %row.i = phi i64 [ %2, %entry ], [ %133, %col.exit5 ]
  %43 = mul i64 %row.i, 1
  %44 = add i64 %11, %43
  %45 = mul i64 %row.i, 0
  %46 = add i64 %19, %45
  %47 = mul i64 %row.i, %29
  %48 = add i64 %27, %47
  %49 = getelementptr i64, ptr %17, i64 %44
  %50 = load i64, ptr %49, align 4
  %51 = add i64 %50, %35
  %52 = icmp slt i64 %50, 0
  %53 = select i1 %52, i64 %51, i64 %50
  %54 = icmp slt i64 %4, %5
  br i1 %54, label %col, label %col.exit
row.exit:                                         ; preds = %col.exit5, %entry
  ret void
col:                                              ; preds = %col, %row
  %col.i = phi i64 [ %4, %row ], [ %73, %col ]
  %55 = phi float [ 0.000000e+00, %row ], [ %70, %col ]
  %56 = phi float [ 0x7FF0000000000000, %row ], [ %71, %col ]
  %57 = phi float [ 0xFFF0000000000000, %row ], [ %72, %col ]
  %58 = mul i64 %col.i, 0
  %59 = add i64 %44, %58
  %60 = mul i64 %col.i, 1
  %61 = add i64 %46, %60
  %62 = mul i64 %col.i, 1
  %63 = add i64 %48, %62
  %64 = mul i64 0, %9
  %65 = add i64 %64, %col.i
  %66 = mul i64 %53, %37
  %67 = add i64 %61, %66
  %68 = getelementptr float, ptr %25, i64 %67
  %69 = load float, ptr %68, align 4
  %70 = fadd reassoc float %55, %69
  %71 = call float @llvm.minimum.f32(float %56, float %69)
  %72 = call float @llvm.maximum.f32(float %57, float %69)
  %73 = add i64 %col.i, 1
  %74 = icmp slt i64 %73, %5
  br i1 %74, label %col, label %col.exit
col.exit:                                         ; preds = %col, %row
  %75 = phi float [ 0.000000e+00, %row ], [ %70, %col ]
  %76 = phi float [ 0x7FF0000000000000, %row ], [ %71, %col ]
  %77 = phi float [ 0xFFF0000000000000, %row ], [ %72, %col ]
  %78 = bitcast i64 %39 to double
  %79 = fptrunc double %78 to float
  %80 = fdiv float %75, %79
  %81 = fcmp olt float %80, %76
  %82 = select i1 %81, float %76, float %80
  %83 = fcmp uno float %80, %76
  %84 = select i1 %83, float 0x7FF8000000000000, float %82
  %85 = fcmp olt float %77, %84
  %86 = select i1 %85, float %77, float %84
  %87 = fcmp uno float %84, %77
  %88 = select i1 %87, float 0x7FF8000000000000, float %86
  %89 = icmp slt i64 %4, %5
  br i1 %89, label %col1, label %col.exit2
col1:                                             ; preds = %col1, %col.exit
  %col.i3 = phi i64 [ %4, %col.exit ], [ %106, %col1 ]
  %90 = phi float [ 0.000000e+00, %col.exit ], [ %105, %col1 ]
  %91 = mul i64 %col.i3, 0
  %92 = add i64 %44, %91
  %93 = mul i64 %col.i3, 1
  %94 = add i64 %46, %93
  %95 = mul i64 %col.i3, 1
  %96 = add i64 %48, %95
  %97 = mul i64 0, %9
  %98 = add i64 %97, %col.i3
  %99 = mul i64 %53, %37
  %100 = add i64 %94, %99
  %101 = getelementptr float, ptr %25, i64 %100
  %102 = load float, ptr %101, align 4
  %103 = fsub float %102, %88
  %104 = fmul float %103, %103
  %105 = fadd reassoc float %90, %104
  %106 = add i64 %col.i3, 1
  %107 = icmp slt i64 %106, %5
  br i1 %107, label %col1, label %col.exit2
col.exit2:                                        ; preds = %col1, %col.exit
  %108 = phi float [ 0.000000e+00, %col.exit ], [ %105, %col1 ]
  %109 = fdiv float %108, %79
  %110 = bitcast i64 %41 to double
  %111 = fptrunc double %110 to float
  %112 = fadd float %109, %111
  %113 = call float @llvm.sqrt.f32(float %112)
  %114 = fdiv float 1.000000e+00, %113
  %115 = icmp slt i64 %4, %5
  br i1 %115, label %col4, label %col.exit5
col4:                                             ; preds = %col4, %col.exit2
  %col.i6 = phi i64 [ %4, %col.exit2 ], [ %131, %col4 ]
  %116 = mul i64 %col.i6, 0
  %117 = add i64 %44, %116
  %118 = mul i64 %col.i6, 1
  %119 = add i64 %46, %118
  %120 = mul i64 %col.i6, 1
  %121 = add i64 %48, %120
  %122 = mul i64 0, %9
  %123 = add i64 %122, %col.i6
  %124 = mul i64 %53, %37
  %125 = add i64 %119, %124
  %126 = getelementptr float, ptr %25, i64 %125
  %127 = load float, ptr %126, align 4
  %128 = fsub float %127, %88
  %129 = fmul float %128, %114
  %130 = getelementptr float, ptr %33, i64 %121
  store float %129, ptr %130, align 4
  %131 = add i64 %col.i6, 1
  %132 = icmp slt i64 %131, %5
  br i1 %132, label %col4, label %col.exit5
col.exit5:                                        ; preds = %col4, %col.exit2
  %133 = add i64 %row.i, 1
  %134 = icmp slt i64 %133, %3
  br i1 %134, label %row, label %row.exit
}
declare float @llvm.minimum.f32(float, float) #1
declare float @llvm.maximum.f32(float, float) #1
declare float @llvm.sqrt.f32(float) #1
