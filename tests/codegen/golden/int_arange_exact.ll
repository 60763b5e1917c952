define void @int_arange_exact(ptr noalias %0, ptr noalias %1, i64 %2, i64 %3, i64 %4, i64 %5) #0 {
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
  %16 = getelementptr inbounds i64, ptr %0, i64 5
  %17 = load i64, ptr %16, align 4
  %18 = getelementptr inbounds i64, ptr %0, i64 6
  %19 = load i64, ptr %18, align 4
  %20 = getelementptr inbounds ptr, ptr %1, i64 2
  %21 = load ptr, ptr %20, align 8
  %22 = getelementptr inbounds i64, ptr %0, i64 7
  %23 = load i64, ptr %22, align 4
  %24 = getelementptr inbounds i64, ptr %0, i64 8
  %25 = load i64, ptr %24, align 4
  %26 = getelementptr inbounds i64, ptr %0, i64 9
  %27 = load i64, ptr %26, align 4
  %28 = getelementptr inbounds i64, ptr %0, i64 10
  %29 = load i64, ptr %28, align 4
  %30 = getelementptr inbounds i64, ptr %0, i64 11
  %31 = load i64, ptr %30, align 4
  %32 = icmp slt i64 %2, %3
  br i1 %32, label %row, label %row.exit
row:                                              ; preds = %col.exit, %entry
  %row.i = phi i64 [ %2, %entry ], [ %97, %col.exit ]
  %33 = icmp slt i64 %4, %5
  br i1 %33, label %col, label %col.exit
row.exit:                                         ; preds = %col.exit, %entry
  ret void
col:                                              ; preds = %col, %row
  %col.i = phi i64 [ %4, %row ], [ %95, %col ]
  %34 = mul i64 %col.i, 1
  %35 = add i64 %9, %34
  %36 = mul i64 %col.i, 1
  %37 = add i64 %13, %36
  %38 = mul i64 %col.i, 1
  %39 = add i64 %17, %38
  %40 = mul i64 0, %7
  %41 = add i64 %40, %col.i
  %42 = bitcast i64 %23 to double
  %43 = bitcast i64 %25 to double
  %44 = sitofp i64 %35 to double
  %45 = fmul double %44, %43
  %46 = fadd double %42, %45
  %47 = fcmp olt double %42, 0x43E0000000000000
  %48 = fcmp oge double %42, 0xC3E0000000000000
  %49 = and i1 %48, %47
  %50 = call i64 @llvm.fptosi.sat.i64.f64(double %42)
  %51 = sitofp i64 %50 to double
  %52 = fcmp oeq double %51, %42
  %53 = and i1 %49, %52
  %54 = fcmp olt double %43, 0x43E0000000000000
  %55 = fcmp oge double %43, 0xC3E0000000000000
  %56 = and i1 %55, %54
  %57 = call i64 @llvm.fptosi.sat.i64.f64(double %43)
  %58 = sitofp i64 %57 to double
  %59 = fcmp oeq double %58, %43
  %60 = and i1 %56, %59
  %61 = mul i64 %35, %57
  %62 = add i64 %50, %61
  %63 = call i64 @llvm.fptosi.sat.i64.f64(double %46)
  %64 = and i1 %53, %60
  %65 = select i1 %64, i64 %62, i64 %63
  %66 = mul i64 %65, %27
  %67 = bitcast i64 %29 to double
  %68 = bitcast i64 %31 to double
  %69 = sitofp i64 %37 to double
  %70 = fmul double %69, %68
  %71 = fadd double %67, %70
  %72 = fcmp olt double %67, 0x43E0000000000000
  %73 = fcmp oge double %67, 0xC3E0000000000000
  %74 = and i1 %73, %72
  %75 = call i64 @llvm.fptosi.sat.i64.f64(double %67)
  %76 = sitofp i64 %75 to double
  %77 = fcmp oeq double %76, %67
  %78 = and i1 %74, %77
  %79 = fcmp olt double %68, 0x43E0000000000000
  %80 = fcmp oge double %68, 0xC3E0000000000000
  %81 = and i1 %80, %79
  %82 = call i64 @llvm.fptosi.sat.i64.f64(double %68)
  %83 = sitofp i64 %82 to double
  %84 = fcmp oeq double %83, %68
  %85 = and i1 %81, %84
  %86 = mul i64 %37, %82
  %87 = add i64 %75, %86
  %88 = call i32 @llvm.fptosi.sat.i32.f64(double %71)
  %89 = trunc i64 %87 to i32
  %90 = and i1 %78, %85
  %91 = select i1 %90, i32 %89, i32 %88
  %92 = sext i32 %91 to i64
  %93 = add i64 %66, %92
  %94 = getelementptr i64, ptr %21, i64 %39
  store i64 %93, ptr %94, align 4
  %95 = add i64 %col.i, 1
  %96 = icmp slt i64 %95, %5
  br i1 %96, label %col, label %col.exit
col.exit:                                         ; preds = %col, %row
  %97 = add i64 %row.i, 1
  %98 = icmp slt i64 %97, %3
  br i1 %98, label %row, label %row.exit
}
declare i64 @llvm.fptosi.sat.i64.f64(double) #1
declare i32 @llvm.fptosi.sat.i32.f64(double) #1
