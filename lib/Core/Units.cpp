//===- Units.cpp - Bytes and shares as people read them -------------------===//

#include "skyline/Units.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace skyline {

std::string formatBytes(int64_t Bytes) {
  static const char *const Units[] = {"KiB", "MiB", "GiB", "TiB"};
  char Text[32];
  if (std::fabs(double(Bytes)) < 1024) {
    std::snprintf(Text, sizeof(Text), "%lld B", (long long)Bytes);
    return Text;
  }
  double Value = double(Bytes) / 1024;
  unsigned Unit = 0;
  for (; std::fabs(Value) >= 1024 && Unit + 1 < 4; ++Unit)
    Value /= 1024;
  // Three significant digits: 9.77 KiB, 58.6 MiB, 586 KiB.
  const char *Format = std::fabs(Value) < 10    ? "%.2f %s"
                       : std::fabs(Value) < 100 ? "%.1f %s"
                                                : "%.0f %s";
  std::snprintf(Text, sizeof(Text), Format, Value, Units[Unit]);
  return Text;
}

std::optional<std::string> formatFarShare(double Fraction) {
  if (Fraction >= 100)
    return std::string("over 10000%");
  if (Fraction <= -100)
    return std::string("under -10000%");
  return std::nullopt;
}

std::string formatShare(double Fraction) {
  if (std::optional<std::string> Far = formatFarShare(Fraction))
    return *Far;
  char Text[32];
  double Percent = Fraction * 100;
  std::snprintf(Text, sizeof(Text),
                std::fabs(Percent) < 10 ? "%.1f%%" : "%.0f%%", Percent);
  return Text;
}

std::string formatShareRange(double Low, double High) {
  return formatShare(Low) + " to " + formatShare(High);
}

} // namespace skyline
