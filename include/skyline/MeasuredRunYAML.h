//===- MeasuredRunYAML.h - A run's fields for both readers ------*- C++ -*-===//
//
// A measured run's times are written twice, by the runtime into its result
// file and by the report, and read back from both: the keys and their
// checks are here once, for both readers.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_MEASUREDRUNYAML_H
#define SKYLINE_MEASUREDRUNYAML_H

#include "skyline/Measure.h"
#include "skyline/YamlFields.h"

#include <string>

namespace skyline {

/// iteration_ms and throughput, checked: a run that fit and measured
/// iterations took time, and a 0 would divide the throughput and the fits
/// by nothing. Reads Run.OutOfMemory and Run.Iterations, so call it after
/// them. Throws BadValue.
inline void readIterationTimes(const YamlFields &Node, MeasuredRun &Run) {
  YamlFields Ms = Node.sub("iteration_ms");
  Run.IterationMs = {Ms.number<double>("median", Least::Zero),
                     Ms.number<double>("mean", Least::Zero),
                     Ms.number<double>("stddev", Least::Zero),
                     Ms.number<double>("min", Least::Zero),
                     Ms.number<double>("max", Least::Zero)};
  if (!Run.OutOfMemory && Run.Iterations > 0 && !(Run.IterationMs.Median > 0))
    throw BadValue{Ms.key("median"),
                   "is " + quotedValue(Ms["median"]) +
                       "; it must be a finite number above 0 in a run that "
                       "fit and measured " +
                       std::to_string(Run.Iterations) + " iterations"};
  Run.Throughput = Node.number<double>("throughput", Least::Zero);
}

} // namespace skyline

#endif // SKYLINE_MEASUREDRUNYAML_H
