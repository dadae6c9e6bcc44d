//===- Units.h - Bytes and shares as people read them -----------*- C++ -*-===//
#ifndef SKYLINE_UNITS_H
#define SKYLINE_UNITS_H

#include <cstdint>
#include <optional>
#include <string>

namespace skyline {

/// 512 B, 9.77 KiB, 58.6 MiB, 586 KiB: three significant digits in binary
/// units, as the budgets are.
std::string formatBytes(int64_t Bytes);

/// "over 10000%" for a share of 100 or more (and "under -10000%"): the end
/// of an extrapolation's interval, whose digits would mean only "far";
/// none for the rest.
std::optional<std::string> formatFarShare(double Fraction);

/// 0.372 -> "37%", 0.0412 -> "4.1%": one decimal below 10%; formatFarShare
/// past 100.
std::string formatShare(double Fraction);

/// "5.0% to 19%": a share's 90% interval (Low and High, fractions).
std::string formatShareRange(double Low, double High);

} // namespace skyline

#endif // SKYLINE_UNITS_H
