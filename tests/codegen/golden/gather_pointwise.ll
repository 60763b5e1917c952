define void @gather_pointwise(ptr noalias %0, ptr noalias %1, i64 %2, i64 %3, i64 %4, i64 %5) #0 {
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
row:                                              ; preds = %col.exit, %entry
  %row.i = phi i64 [ %2, %entry ], [ %81, %col.exit ]
  %53 = mul i64 %row.i, %13
  %54 = add i64 %11, %53
  %55 = mul i64 %row.i, %21
  %56 = add i64 %19, %55
  %57 = mul i64 %row.i, 0
  %58 = add i64 %27, %57
  %59 = mul i64 %row.i, %37
  %60 = add i64 %35, %59
  %61 = icmp slt i64 %4, %5
  br i1 %61, label %col, label %col.exit
row.exit:                                         ; preds = %col.exit, %entry
  ret void
col:                                              ; preds = %gather.ok, %row
  %col.i = phi i64 [ %4, %row ], [ %93, %gather.ok ]
  %62 = mul i64 %col.i, 1
  %63 = add i64 %54, %62
  %64 = mul i64 %col.i, 0
  %65 = add i64 %56, %64
  %66 = mul i64 %col.i, 0
  %67 = add i64 %58, %66
  %68 = mul i64 %col.i, 1
  %69 = add i64 %60, %68
  %70 = mul i64 0, %9
  %71 = add i64 %70, %col.i
  %72 = getelementptr i32, ptr %17, i64 %63
  %73 = load i32, ptr %72, align 4
  %74 = trunc i64 %43 to i32
  %75 = mul i32 %73, %74
  %76 = sext i32 %75 to i64
  %77 = add i64 %76, %45
  %78 = icmp slt i64 %76, 0
  %79 = select i1 %78, i64 %77, i64 %76
  %80 = icmp uge i64 %79, %45
  br i1 %80, label %gather.bad, label %gather.ok, !prof !0
col.exit:                                         ; preds = %gather.ok, %row
  %81 = add i64 %row.i, 1
  %82 = icmp slt i64 %81, %3
  br i1 %82, label %row, label %row.exit
gather.bad:                                       ; preds = %col
  store i64 %49, ptr %33, align 4
  %83 = getelementptr inbounds i64, ptr %33, i64 1
  store i64 %76, ptr %83, align 4
  br label %gather.ok
gather.ok:                                        ; preds = %gather.bad, %col
  %84 = select i1 %80, i64 0, i64 %79
  %85 = mul i64 %84, %47
  %86 = add i64 %65, %85
  %87 = getelementptr float, ptr %25, i64 %86
  %88 = load float, ptr %87, align 4
  %89 = bitcast i64 %51 to double
  %90 = fptrunc double %89 to float
  %91 = fmul float %88, %90
  %92 = getelementptr float, ptr %41, i64 %69
  store float %91, ptr %92, align 4
  %93 = add i64 %col.i, 1
  %94 = icmp slt i64 %93, %5
  br i1 %94, label %col, label %col.exit
}
