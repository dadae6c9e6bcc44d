//===- SettingEdits.h - Fix-its the experiments share -----------*- C++ -*-===//
#ifndef SKYLINE_LIB_EXPERIMENTS_SETTINGEDITS_H
#define SKYLINE_LIB_EXPERIMENTS_SETTINGEDITS_H

#include "skyline/ProgramModel.h"

#include <cstdint>
#include <vector>

namespace skyline {

/// The edits that make the program run Count intra-op threads: every call
/// of its own gets the count (a later one would undo an earlier one's);
/// without one, torch::set_num_threads(Count) at the start of main.
std::vector<TextEdit> intraOpThreadEdits(const ProgramModel &Program,
                                         int64_t Count);

} // namespace skyline

#endif // SKYLINE_LIB_EXPERIMENTS_SETTINGEDITS_H
