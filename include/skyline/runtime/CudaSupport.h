//===- CudaSupport.h - The runtime's CUDA side ------------------*- C++ -*-===//
//
// What Runtime.cpp calls, one line at each hook, when the program may run on
// CUDA: synchronizing at iteration boundaries, the caching allocator's peak
// over the measured iterations, its blocks tagged by phase and scope (a
// DeviceMemoryReporter), CUPTI kernel time per scope (CUDA events where
// CUPTI is unavailable), the device's name and memory. Built against a LibTorch
// without CUDA (or with CUDA hidden from the program, CUDA_VISIBLE_DEVICES=)
// every hook does nothing: no CUDA context is made and CUPTI is not loaded.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_RUNTIME_CUDASUPPORT_H
#define SKYLINE_RUNTIME_CUDASUPPORT_H

#include "skyline/runtime/MemoryTracker.h"
#include "skyline/runtime/RunResult.h"

#include <array>
#include <cstdint>
#include <vector>

namespace skyline::rt::cuda {

/// At the start of iteration Index, before its clock is read: decides
/// whether the program runs on CUDA (until the end of warm-up), records the
/// boundary's event on the current stream (the GPU's timeline), resets the
/// allocator's peak at the end of warm-up and, in a breakdown run (Trace,
/// which loads CUPTI for kernel time per scope), synchronizes the device
/// and moves the measured window's end to this boundary. A timing run adds
/// no synchronize: its iteration times are read from the events at the end.
/// OnOutOfMemory is called when the caching allocator runs out of memory;
/// MostIterations: the most measured iterations (sizes the event pool).
void iterationBegin(int Index, int Warmup, bool Trace,
                    MemoryTracker::OutOfMemoryHandler OnOutOfMemory,
                    int MostIterations = 8) noexcept;

/// A breakdown run switches into phase P (a Phase value): its event on the
/// current stream. One relaxed load when not on CUDA.
void phaseBegin(uint8_t P) noexcept;

/// At the run's end (not after main returned): synchronizes the device and
/// reads the timeline's events; true when they give the iteration times
/// (and, in a breakdown run, the phases').
bool resolveTimeline() noexcept;
/// After resolveTimeline: the GPU's time of iteration Index (boundary to
/// boundary), -1 where not known.
double iterationMs(int Index) noexcept;
/// After resolveTimeline: ms per iteration in each phase over the measured
/// iterations, from the stream's timeline; false where it has none.
bool phaseSplitMs(std::array<double, NumPhases> &Split) noexcept;

/// At program start, on the main thread, before the program's own code: a
/// breakdown run pushes the CUDA memory reporter on this thread's debug
/// info (unless CUDA is hidden), so every device block is tagged.
void programStart(bool Breakdown) noexcept;

/// On a CUDA run with the reporter: the device's tagged bytes, which give
/// the memory kinds and the layers' activation bytes. Null otherwise (the
/// CPU allocator's tags are the run's).
const TaggedBytes *deviceMemory() noexcept;

/// Scope entry and exit (and backward ops, with their forward's scope) on
/// the calling thread: the external correlation id of its kernels. One
/// relaxed load when not tracing.
void scopeEnter(int ScopeId) noexcept;
void scopeExit() noexcept;

/// On a CUDA run, when describing the environment: the device's name and
/// memory, and the allocator's peak as the run's peak. Leaves R alone
/// otherwise.
void describeDevice(RunResult &R) noexcept;

/// On a CUDA run, once the layer rows exist: gpu_ms per row, from CUPTI or
/// the CUDA events (or a note saying why not), and which one; the workspace
/// kind (DeviceMemoryReporter::workspace, less the blocks at
/// GradientBlocks) taken out of the activations, temporaries and layers;
/// what the allocator's peak holds beyond the tagged kinds becomes
/// untracked (all of it without a reporter).
void completeLayers(RunResult &R,
                    const std::vector<uintptr_t> &GradientBlocks = {}) noexcept;

/// Whether the program may run on CUDA: not hidden, and a device available
/// (asks CUDA for the count, which makes no context).
bool mayUseDevice() noexcept;
/// Whether the boundaries have decided yet, and whether on CUDA.
bool decided() noexcept;
bool onDevice() noexcept;

/// An evaluation pass's boundary (Runtime.h's evaluation_begin and
/// evaluation_end) where the program holds memory on a GPU: waits for the
/// pass's kernels (its time is the device's too) and, at its start, resets
/// the caching allocator's peak; at its end, Peak is that peak. False where
/// nothing is on a GPU: the host's tracker measures the pass.
bool evaluationBoundary(bool Start, int64_t &Peak) noexcept;

/// Whether this run started CUPTI (tests, device-check).
bool cuptiStarted() noexcept;

/// Whether CUDA is hidden from the program (CUDA_VISIBLE_DEVICES set and
/// empty, as --device=cpu does).
bool hiddenByEnvironment();

} // namespace skyline::rt::cuda

#endif // SKYLINE_RUNTIME_CUDASUPPORT_H
