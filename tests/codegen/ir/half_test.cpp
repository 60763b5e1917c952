// float16 and bfloat16 conversions (codegen/ir/half.h): exact widening, round-to-nearest-even
// narrowing, subnormals, signed zeros, inf, NaN and overflow to inf.
#include "codegen/ir/half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace {

using lf::BFloat16;
using lf::Half;

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

// The value of float16 bits, computed from the format's definition (not from half.h).
double half_value(uint16_t h) {
  int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v;
  if (exp == 0x1f) {
    v = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (exp == 0) {
    v = std::ldexp(mant, -24);
  } else {
    v = std::ldexp(1024 + mant, exp - 25);
  }
  return sign ? -v : v;
}

TEST(Half, KnownValues) {
  EXPECT_EQ(Half::from_float(0.0f), 0x0000);
  EXPECT_EQ(Half::from_float(-0.0f), 0x8000);
  EXPECT_EQ(Half::from_float(1.0f), 0x3c00);
  EXPECT_EQ(Half::from_float(-2.0f), 0xc000);
  EXPECT_EQ(Half::from_float(0.5f), 0x3800);
  EXPECT_EQ(Half::from_float(65504.0f), 0x7bff);  // largest finite
  EXPECT_EQ(Half::from_float(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(Half::from_float(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(Half::from_float(std::ldexp(1023.0f, -24)), 0x03ff);  // largest subnormal
  EXPECT_EQ(Half::from_float(kInf), 0x7c00);
  EXPECT_EQ(Half::from_float(-kInf), 0xfc00);
}

TEST(Half, RoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 (even) and 1 + 2^-10: down to even.
  EXPECT_EQ(Half::from_float(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even): up.
  EXPECT_EQ(Half::from_float(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  // Just above and below a halfway point.
  EXPECT_EQ(Half::from_float(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3c01);
  EXPECT_EQ(Half::from_float(1.0f + 3 * std::ldexp(1.0f, -11) - std::ldexp(1.0f, -20)), 0x3c01);
  // A carry out of the mantissa bumps the exponent: 2 - 2^-12 rounds up to 2.
  EXPECT_EQ(Half::from_float(2.0f - std::ldexp(1.0f, -12)), 0x4000);
  EXPECT_EQ(Half::from_float(-(1.0f + 3 * std::ldexp(1.0f, -11))), 0xbc02);
}

TEST(Half, SubnormalRounding) {
  // 2^-25 is halfway between 0 (even) and 2^-24: to zero, keeping the sign.
  EXPECT_EQ(Half::from_float(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(Half::from_float(-std::ldexp(1.0f, -25)), 0x8000);
  // 3 * 2^-25 is halfway between 1 and 2 (units of 2^-24): to 2.
  EXPECT_EQ(Half::from_float(3 * std::ldexp(1.0f, -25)), 0x0002);
  // Just above 2^-25 rounds up to the smallest subnormal.
  EXPECT_EQ(Half::from_float(std::ldexp(1.0f, -25) * 1.0001f), 0x0001);
  // 1023.5 units: halfway between the largest subnormal (odd) and the smallest normal: up.
  EXPECT_EQ(Half::from_float(std::ldexp(2047.0f, -25)), 0x0400);
  // Far below: zero. A float subnormal too.
  EXPECT_EQ(Half::from_float(1e-30f), 0x0000);
  EXPECT_EQ(Half::from_float(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(Half::from_float(-1e-30f), 0x8000);
}

TEST(Half, OverflowToInf) {
  // 65520 is halfway between 65504 (odd mantissa) and 65536 (not finite): rounds to inf.
  EXPECT_EQ(Half::from_float(65519.996f), 0x7bff);
  EXPECT_EQ(Half::from_float(65520.0f), 0x7c00);
  EXPECT_EQ(Half::from_float(-65520.0f), 0xfc00);
  EXPECT_EQ(Half::from_float(1e10f), 0x7c00);
  EXPECT_EQ(Half::from_float(std::numeric_limits<float>::max()), 0x7c00);
  EXPECT_EQ(Half::from_float(-std::numeric_limits<float>::max()), 0xfc00);
}

TEST(Half, NaNStaysNaN) {
  for (float nan : {kNaN, -kNaN, lf::bits_float(0x7f800001u), lf::bits_float(0xff800001u), lf::bits_float(0x7fffffffu)}) {
    uint16_t h = Half::from_float(nan);
    EXPECT_EQ(h & 0x7c00, 0x7c00) << std::hex << h;
    EXPECT_NE(h & 0x03ff, 0) << std::hex << h;  // not inf
    EXPECT_TRUE(std::isnan(Half::to_float(h)));
  }
}

TEST(Half, EveryBitPatternWidensExactlyAndRoundTrips) {
  for (uint32_t u = 0; u <= 0xffff; ++u) {
    uint16_t h = static_cast<uint16_t>(u);
    float f = Half::to_float(h);
    double want = half_value(h);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << u;
      continue;
    }
    ASSERT_EQ(static_cast<double>(f), want) << std::hex << u;
    ASSERT_EQ(std::signbit(f), (u & 0x8000) != 0) << std::hex << u;
    ASSERT_EQ(Half::from_float(f), h) << std::hex << u;
  }
}

TEST(Half, EveryMidpointRoundsToEven) {
  // Between each pair of adjacent positive finite float16 values, the midpoint (exact in float)
  // goes to the one with an even mantissa, and one float ulp either side goes to the nearer.
  for (uint16_t lo = 0; lo < 0x7bff; ++lo) {
    uint16_t hi = lo + 1;
    float mid = static_cast<float>((half_value(lo) + half_value(hi)) / 2);
    ASSERT_EQ(static_cast<double>(mid), (half_value(lo) + half_value(hi)) / 2);
    uint16_t even = (lo & 1) ? hi : lo;
    ASSERT_EQ(Half::from_float(mid), even) << std::hex << lo;
    ASSERT_EQ(Half::from_float(std::nextafter(mid, 0.0f)), lo) << std::hex << lo;
    ASSERT_EQ(Half::from_float(std::nextafter(mid, kInf)), hi) << std::hex << lo;
    ASSERT_EQ(Half::from_float(-mid), even | 0x8000) << std::hex << lo;
  }
}

TEST(BFloat16, KnownValues) {
  EXPECT_EQ(BFloat16::from_float(0.0f), 0x0000);
  EXPECT_EQ(BFloat16::from_float(-0.0f), 0x8000);
  EXPECT_EQ(BFloat16::from_float(1.0f), 0x3f80);
  EXPECT_EQ(BFloat16::from_float(-2.0f), 0xc000);
  EXPECT_EQ(BFloat16::from_float(kInf), 0x7f80);
  EXPECT_EQ(BFloat16::from_float(-kInf), 0xff80);
  EXPECT_EQ(BFloat16::to_float(0x3f80), 1.0f);
  EXPECT_EQ(BFloat16::to_float(0x7f7f), std::ldexp(255.0f, 120));  // largest finite: (2 - 2^-7) * 2^127
  EXPECT_EQ(BFloat16::to_float(0x0001), std::ldexp(1.0f, -133));    // smallest subnormal
}

TEST(BFloat16, RoundsToNearestEven) {
  EXPECT_EQ(BFloat16::from_float(1.0f + std::ldexp(1.0f, -8)), 0x3f80);      // tie, down to even
  EXPECT_EQ(BFloat16::from_float(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);  // tie, up to even
  EXPECT_EQ(BFloat16::from_float(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)), 0x3f81);
  EXPECT_EQ(BFloat16::from_float(2.0f - std::ldexp(1.0f, -9)), 0x4000);  // carry into the exponent
  // Subnormal floats round the same way.
  EXPECT_EQ(BFloat16::from_float(std::ldexp(3.0f, -134)), 0x0002);
  EXPECT_EQ(BFloat16::from_float(std::ldexp(1.0f, -134)), 0x0000);
}

TEST(BFloat16, OverflowToInf) {
  // Halfway between the largest finite (odd mantissa) and 2^128: rounds to inf.
  EXPECT_EQ(BFloat16::from_float(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(BFloat16::from_float(-std::numeric_limits<float>::max()), 0xff80);
  EXPECT_EQ(BFloat16::from_float(lf::bits_float(0x7f7f7fffu)), 0x7f7f);  // just below halfway
}

TEST(BFloat16, NaNStaysNaN) {
  for (float nan : {kNaN, -kNaN, lf::bits_float(0x7f800001u), lf::bits_float(0xff800001u), lf::bits_float(0x7fffffffu)}) {
    uint16_t b = BFloat16::from_float(nan);
    EXPECT_TRUE(std::isnan(BFloat16::to_float(b))) << std::hex << b;
  }
}

TEST(BFloat16, EveryBitPatternRoundTrips) {
  for (uint32_t u = 0; u <= 0xffff; ++u) {
    float f = BFloat16::to_float(static_cast<uint16_t>(u));
    ASSERT_EQ(lf::float_bits(f), u << 16);
    if (std::isnan(f)) {
      ASSERT_TRUE(std::isnan(BFloat16::to_float(BFloat16::from_float(f))));
    } else {
      ASSERT_EQ(BFloat16::from_float(f), u) << std::hex << u;
    }
  }
}

}  // namespace
