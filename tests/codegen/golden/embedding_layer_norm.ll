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
  %40 = getelementptr inbounds ptr, ptr %1, i64 3
  %41 = load ptr, ptr %40, align 8
  %42 = getelementptr inbounds i64, ptr %0, i64 14
  %43 = load i64, ptr %42, align 4
  %44 = getelementptr inbounds i64, ptr %0, i64 15
  %45 = load i64, ptr %44, align 4
  %46 = getelementptr inbounds i64, ptr %0, i64 16
  %47 = load i64, ptr %46, align 4
  %48 = getelementptr inbounds i64, ptr %0, i64 17
  %49 = load i64, ptr %48, align 4
  %50 = getelementptr inbounds i64, ptr %0, i64 18
  %51 = load i64, ptr %50, align 4
  %52 = icmp slt i64 %2, %3
  br i1 %52, label %row, label %row.exit
row:                                              ; preds = %col.exit7, %entry
  %row.i = phi i64 [ %2, %entry ], [ %145, %col.exit7 ]
  %53 = mul i64 %row.i, 1
  %54 = add i64 %11, %53
  %55 = mul i64 %row.i, 0
  %56 = add i64 %19, %55
  %57 = mul i64 %row.i, 0
  %58 = add i64 %27, %57
  %59 = mul i64 %row.i, %37
  %60 = add i64 %35, %59
  %61 = icmp slt i64 %4, %5
  br i1 %61, label %col, label %col.exit
row.exit:                                         ; preds = %col.exit7, %entry
  ret void
col:                                              ; preds = %gather.ok, %row
  %col.i = phi i64 [ %4, %row ], [ %91, %gather.ok ]
  %62 = phi float [ 0.000000e+00, %row ], [ %90, %gather.ok ]
  %63 = mul i64 %col.i, 0
  %64 = add i64 %54, %63
  %65 = mul i64 %col.i, 1
  %66 = add i64 %56, %65
  %67 = mul i64 %col.i, 0
  %68 = add i64 %58, %67
  %69 = mul i64 %col.i, 1
  %70 = add i64 %60, %69
  %71 = mul i64 0, %9
  %72 = add i64 %71, %col.i
  %73 = getelementptr i64, ptr %17, i64 %64
  %74 = load i64, ptr %73, align 4
  %75 = add i64 %74, %43
  %76 = icmp slt i64 %74, 0
  %77 = select i1 %76, i64 %75, i64 %74
  %78 = icmp uge i64 %77, %43
  br i1 %78, label %gather.bad, label %gather.ok, !prof !0
col.exit:                                         ; preds = %gather.ok, %row
  %79 = phi float [ 0.000000e+00, %row ], [ %90, %gather.ok ]
  %80 = bitcast i64 %49 to double
  %81 = fptrunc double %80 to float
  %82 = fdiv float %79, %81
  %83 = icmp slt i64 %4, %5
  br i1 %83, label %col1, label %col.exit2
gather.bad:                                       ; preds = %col
  store i64 %47, ptr %33, align 4
  %84 = getelementptr inbounds i64, ptr %33, i64 1
  store i64 %74, ptr %84, align 4
  br label %gather.ok
gather.ok:                                        ; preds = %gather.bad, %col
  %85 = select i1 %78, i64 0, i64 %77
  %86 = mul i64 %85, %45
  %87 = add i64 %66, %86
  %88 = getelementptr float, ptr %25, i64 %87
  %89 = load float, ptr %88, align 4
  %90 = fadd reassoc float %62, %89
  %91 = add i64 %col.i, 1
  %92 = icmp slt i64 %91, %5
  br i1 %92, label %col, label %col.exit
col1:                                             ; preds = %gather.ok5, %col.exit
  %col.i3 = phi i64 [ %4, %col.exit ], [ %127, %gather.ok5 ]
  %93 = phi float [ 0.000000e+00, %col.exit ], [ %126, %gather.ok5 ]
  %94 = mul i64 %col.i3, 0
  %95 = add i64 %54, %94
  %96 = mul i64 %col.i3, 1
  %97 = add i64 %56, %96
  %98 = mul i64 %col.i3, 0
  %99 = add i64 %58, %98
  %100 = mul i64 %col.i3, 1
  %101 = add i64 %60, %100
  %102 = mul i64 0, %9
  %103 = add i64 %102, %col.i3
  %104 = getelementptr i64, ptr %17, i64 %95
  %105 = load i64, ptr %104, align 4
  %106 = add i64 %105, %43
  %107 = icmp slt i64 %105, 0
  %108 = select i1 %107, i64 %106, i64 %105
  %109 = icmp uge i64 %108, %43
  br i1 %109, label %gather.bad4, label %gather.ok5, !prof !0
col.exit2:                                        ; preds = %gather.ok5, %col.exit
  %110 = phi float [ 0.000000e+00, %col.exit ], [ %126, %gather.ok5 ]
  %111 = fdiv float %110, %81
  %112 = bitcast i64 %51 to double
  %113 = fptrunc double %112 to float
  %114 = fadd float %111, %113
  %115 = call float @llvm.sqrt.f32(float %114)
  %116 = fdiv float 1.000000e+00, %115
  %117 = icmp slt i64 %4, %5
  br i1 %117, label %col6, label %col.exit7
gather.bad4:                                      ; preds = %col1
  store i64 %47, ptr %33, align 4
  %118 = getelementptr inbounds i64, ptr %33, i64 1
  store i64 %105, ptr %118, align 4
  br label %gather.ok5
gather.ok5:                                       ; preds = %gather.bad4, %col1
  %119 = select i1 %109, i64 0, i64 %108
  %120 = mul i64 %119, %45
  %121 = add i64 %97, %120
  %122 = getelementptr float, ptr %25, i64 %121
  %123 = load float, ptr %122, align 4
  %124 = fsub float %123, %82
  %125 = fmul float %124, %124
  %126 = fadd reassoc float %93, %125
  %127 = add i64 %col.i3, 1
  %128 = icmp slt i64 %127, %5
  br i1 %128, label %col1, label %col.exit2
col6:                                             ; preds = %gather.ok10, %col.exit2
  %col.i8 = phi i64 [ %4, %col.exit2 ], [ %156, %gather.ok10 ]
  %129 = mul i64 %col.i8, 0
  %130 = add i64 %54, %129
  %131 = mul i64 %col.i8, 1
  %132 = add i64 %56, %131
  %133 = mul i64 %col.i8, 0
  %134 = add i64 %58, %133
  %135 = mul i64 %col.i8, 1
  %136 = add i64 %60, %135
  %137 = mul i64 0, %9
  %138 = add i64 %137, %col.i8
  %139 = getelementptr i64, ptr %17, i64 %130
  %140 = load i64, ptr %139, align 4
  %141 = add i64 %140, %43
  %142 = icmp slt i64 %140, 0
  %143 = select i1 %142, i64 %141, i64 %140
  %144 = icmp uge i64 %143, %43
  br i1 %144, label %gather.bad9, label %gather.ok10, !prof !0
col.exit7:                                        ; preds = %gather.ok10, %col.exit2
  %145 = add i64 %row.i, 1
  %146 = icmp slt i64 %145, %3
  br i1 %146, label %row, label %row.exit
gather.bad9:                                      ; preds = %col6
  store i64 %47, ptr %33, align 4
  %147 = getelementptr inbounds i64, ptr %33, i64 1
  store i64 %140, ptr %147, align 4
  br label %gather.ok10
gather.ok10:                                      ; preds = %gather.bad9, %col6
  %148 = select i1 %144, i64 0, i64 %143
  %149 = mul i64 %148, %45
  %150 = add i64 %132, %149
  %151 = getelementptr float, ptr %25, i64 %150
  %152 = load float, ptr %151, align 4
  %153 = fsub float %152, %82
  %154 = fmul float %153, %116
  %155 = getelementptr float, ptr %41, i64 %136
  store float %154, ptr %155, align 4
  %156 = add i64 %col.i8, 1
  %157 = icmp slt i64 %156, %5
  br i1 %157, label %col6, label %col.exit7
}
declare float @llvm.sqrt.f32(float) #1
