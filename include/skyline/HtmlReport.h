//===- HtmlReport.h - One self-contained HTML page --------------*- C++ -*-===//
//
// The page of --html: throughput and peak memory against batch size (measured
// points, the model's curves, the capacity line, the current, suggested and
// largest sizes), the memory breakdown and the per-layer table at the current
// size, the findings and the measured runs. Charts are inline SVG drawn here;
// the page needs no script and makes no network request.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_HTMLREPORT_H
#define SKYLINE_HTMLREPORT_H

#include "skyline/Findings.h"
#include "skyline/Measurement.h"
#include "skyline/Model.h"
#include "skyline/Units.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace skyline {

struct HtmlReportInput {
  std::string Title;             // "skyline-check: train.cpp"
  std::string BatchSizeName;     // kBatchSize
  std::string BatchSizeLocation; // file:line
  const Measurement *Measured = nullptr;
  /// May be null, or without fits when the runs could not predict.
  const Analysis *Model = nullptr;
  llvm::ArrayRef<Finding> Findings;
};

/// The whole page. Deterministic: the same input gives the same bytes.
std::string renderHtmlReport(const HtmlReportInput &In);

/// Text safe inside HTML elements and quoted attributes: &<>"' escaped.
std::string escapeHtml(llvm::StringRef Text);

} // namespace skyline

#endif // SKYLINE_HTMLREPORT_H
