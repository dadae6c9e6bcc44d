// Given to the target by its compile options (-include), never by an
// #include: the instrumented copy builds only if it keeps the option.
#pragma once
constexpr int kForcedSteps = 40;
