//===- Cupti.cpp - CUPTI's activity API, loaded at run time --------------===//
//
// The real ActivityApi. CUPTI is opened with dlopen only on CUDA runs, so
// the runtime neither links it nor needs its headers: the few types and
// entry points used are declared here (GpuActivity.h gives the record
// offsets, which the unit test checks against cupti.h where it exists).
//
// Buffers come from a pool allocated at start: CUPTI asks for one from the
// launching thread, so the request allocates nothing; a full pool drops
// records (counted) rather than growing. Completed buffers are read on
// CUPTI's thread, handed to the sink and returned to the pool.
//
//===----------------------------------------------------------------------===//

#include "skyline/runtime/GpuActivity.h"
#include "skyline/runtime/RunFormat.h"

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>

namespace skyline::rt {
namespace {

using CuptiResult = cupti::Result;
constexpr CuptiResult CuptiSuccess = cupti::Success;
constexpr uint32_t FlushForced = 1; // CUPTI_ACTIVITY_FLAG_FLUSH_FORCED
using CuptiFunctions = cupti::Functions;

template <typename T> T readAt(const uint8_t *Record, size_t Offset) {
  T Value;
  std::memcpy(&Value, Record + Offset, sizeof(T));
  return Value;
}

/// 32 buffers of 1 MiB: a kernel record is 216 bytes, and buffers are
/// recycled as soon as CUPTI completes them.
constexpr size_t BufferCount = 32;
constexpr size_t BufferSize = size_t(1) << 20;

class CuptiActivityApi final : public ActivityApi {
public:
  CuptiActivityApi(void *Library, const CuptiFunctions &Fns)
      : Library(Library), Fn(Fns) {}
  ~CuptiActivityApi() override {
    if (Current.load() == this)
      stop();
  }

  bool start(ActivitySink &S) override {
    if (Current.load())
      return fail("another CUPTI activity session is running");
    Sink = &S;
    try {
      for (size_t I = 0; I < BufferCount; ++I) {
        Pool[I].reset(new (std::align_val_t(8)) uint8_t[BufferSize]);
        Free[I] = Pool[I].get();
      }
      FreeCount = BufferCount;
    } catch (...) {
      return fail("no memory for CUPTI's buffers");
    }
    Current = this;
    // cupti_activity.h: an external-correlation record is written in front
    // of an API record (kinds DRIVER and RUNTIME) made inside the pushed
    // region, and a kernel record carries the correlation id of the API
    // record that launched it. Without an API kind there is no external
    // record, and no kernel finds its scope. LibTorch launches through the
    // runtime API; libraries may call the driver's cuLaunchKernel
    // directly, so both are enabled, as Kineto does. One of the two is
    // enough to attribute what it covers.
    if (!check(Fn.ActivityRegisterCallbacks(&onBufferRequested,
                                            &onBufferCompleted),
               "cuptiActivityRegisterCallbacks")) {
      Current = nullptr;
      return false;
    }
    ApiKinds = 0;
    if (check(Fn.ActivityEnable(cupti_layout::KindRuntime),
              "cuptiActivityEnable(RUNTIME)"))
      ApiKinds |= 1;
    if (check(Fn.ActivityEnable(cupti_layout::KindDriver),
              "cuptiActivityEnable(DRIVER)"))
      ApiKinds |= 2;
    if (!ApiKinds ||
        !check(Fn.ActivityEnable(cupti_layout::KindExternalCorrelation),
               "cuptiActivityEnable(EXTERNAL_CORRELATION)") ||
        !check(Fn.ActivityEnable(cupti_layout::KindConcurrentKernel),
               "cuptiActivityEnable(CONCURRENT_KERNEL)")) {
      disableKinds();
      Current = nullptr;
      return false;
    }
    // One API kind failing is not fatal: the first failure stays in
    // failure() for the note, the run goes on.
    if (ApiKinds == 3)
      Failure.clear();
    return true;
  }

  void stop() override {
    if (Current.load() != this)
      return;
    disableKinds();
    flush();
    Current = nullptr;
  }

  void flush() override {
    if (Current.load() == this)
      check(Fn.ActivityFlushAll(FlushForced), "cuptiActivityFlushAll");
  }

  void pushExternalCorrelation(uint64_t Id) noexcept override {
    Fn.ActivityPushExternalCorrelationId(cupti_layout::ExternalKindCustom0, Id);
  }

  void popExternalCorrelation() noexcept override {
    uint64_t Last = 0;
    Fn.ActivityPopExternalCorrelationId(cupti_layout::ExternalKindCustom0,
                                        &Last);
  }

  uint64_t timestampNs() noexcept override {
    uint64_t Now = 0;
    Fn.GetTimestamp(&Now);
    return Now;
  }

  std::string failure() const override { return Failure; }

private:
  void disableKinds() {
    Fn.ActivityDisable(cupti_layout::KindConcurrentKernel);
    Fn.ActivityDisable(cupti_layout::KindExternalCorrelation);
    Fn.ActivityDisable(cupti_layout::KindRuntime);
    Fn.ActivityDisable(cupti_layout::KindDriver);
  }

  bool fail(std::string Why) {
    if (Failure.empty())
      Failure = std::move(Why);
    return false;
  }

  /// Every CUPTI call's status goes through here: the first failure is
  /// kept, with the call and CUPTI's name for the status.
  bool check(CuptiResult Result, const char *Call) {
    if (Result == CuptiSuccess)
      return true;
    const char *Text = nullptr;
    if (Fn.GetResultString(Result, &Text) != CuptiSuccess || !Text)
      Text = "unknown error";
    return fail(std::string(Call) + " failed: " + Text + " (" +
                std::to_string(Result) + ")");
  }

  static void onBufferRequested(uint8_t **Buffer, size_t *Size,
                                size_t *MaxRecords) {
    *Buffer = nullptr;
    *Size = 0;
    *MaxRecords = 0; // as many as fit
    CuptiActivityApi *Self = Current;
    if (!Self)
      return;
    std::lock_guard<std::mutex> Hold(Self->PoolLock);
    if (Self->FreeCount == 0)
      return; // CUPTI drops the records and counts them
    *Buffer = Self->Free[--Self->FreeCount];
    *Size = BufferSize;
  }

  static void onBufferCompleted(void *Context, uint32_t StreamId,
                                uint8_t *Buffer, size_t, size_t ValidSize) {
    CuptiActivityApi *Self = Current;
    if (!Self || !Buffer)
      return;
    Self->read(Buffer, ValidSize);
    size_t Dropped = 0;
    if (Self->Fn.ActivityGetNumDroppedRecords(Context, StreamId, &Dropped) ==
            CuptiSuccess &&
        Dropped)
      Self->Sink->onDropped(Dropped);
    std::lock_guard<std::mutex> Hold(Self->PoolLock);
    if (Self->FreeCount < BufferCount)
      Self->Free[Self->FreeCount++] = Buffer;
  }

  void read(uint8_t *Buffer, size_t ValidSize) {
    void *Record = nullptr;
    while (Fn.ActivityGetNextRecord(Buffer, ValidSize, &Record) ==
               CuptiSuccess &&
           Record) {
      const auto *Bytes = static_cast<const uint8_t *>(Record);
      uint32_t Kind = readAt<uint32_t>(Bytes, 0);
      try {
        if (Kind == cupti_layout::KindConcurrentKernel)
          Sink->onKernel(
              {readAt<uint32_t>(Bytes, cupti_layout::KernelCorrelationId),
               readAt<uint64_t>(Bytes, cupti_layout::KernelStart),
               readAt<uint64_t>(Bytes, cupti_layout::KernelEnd)});
        else if (Kind == cupti_layout::KindExternalCorrelation &&
                 readAt<uint32_t>(Bytes, cupti_layout::ExternalKind) ==
                     cupti_layout::ExternalKindCustom0)
          Sink->onExternalCorrelation(
              {readAt<uint32_t>(Bytes, cupti_layout::ExternalCorrelationId),
               readAt<uint64_t>(Bytes, cupti_layout::ExternalId)});
        else if (Kind == cupti_layout::KindRuntime ||
                 Kind == cupti_layout::KindDriver)
          Sink->onApi(readAt<uint32_t>(Bytes, cupti_layout::ApiCorrelationId));
      } catch (...) {
        Sink->onDropped(1); // out of memory while keeping it
      }
    }
  }

  struct BufferDelete {
    void operator()(uint8_t *P) const {
      ::operator delete[](P, std::align_val_t(8));
    }
  };

  /// CUPTI's callbacks are plain functions: the session they serve.
  static inline std::atomic<CuptiActivityApi *> Current{nullptr};

  void *Library; // kept open: CUPTI cannot be unloaded safely
  CuptiFunctions Fn;
  ActivitySink *Sink = nullptr;
  std::string Failure;
  int ApiKinds = 0; // 1: RUNTIME enabled, 2: DRIVER enabled
  std::array<std::unique_ptr<uint8_t[], BufferDelete>, BufferCount> Pool;
  std::mutex PoolLock;
  std::array<uint8_t *, BufferCount> Free{};
  size_t FreeCount = 0;
};

template <typename T>
bool resolve(void *Library, const char *Name, T &Fn, std::string &Missing) {
  Fn = reinterpret_cast<T>(dlsym(Library, Name));
  if (!Fn)
    Missing += std::string(Missing.empty() ? "" : ", ") + Name;
  return Fn != nullptr;
}

} // namespace

std::unique_ptr<ActivityApi> makeCuptiActivityApi(const cupti::Functions &Fns,
                                                  void *Library) {
  return std::make_unique<CuptiActivityApi>(Library, Fns);
}

std::unique_ptr<ActivityApi>
loadCupti(const std::vector<std::string> &Candidates, std::string &Failure) {
  Failure.clear();
  if (Candidates.empty()) {
    Failure = "no CUPTI library to try";
    return nullptr;
  }
  // A CUPTI already in the process (LibTorch's Kineto links one) is the one
  // to use: a second copy of another version would fight it.
  std::vector<std::string> Order;
  for (const std::string &Path : Candidates)
    if (void *Loaded = dlopen(Path.c_str(), RTLD_NOW | RTLD_NOLOAD)) {
      dlclose(Loaded);
      Order.push_back(Path);
    }
  Order.insert(Order.end(), Candidates.begin(), Candidates.end());
  for (const std::string &Path : Order) {
    void *Library = dlopen(Path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!Library) {
      const char *Error = dlerror();
      Failure += (Failure.empty() ? "" : "; ") +
                 std::string(Error ? Error : Path + ": cannot be loaded");
      continue;
    }
    CuptiFunctions Fn{};
    std::string Missing;
    resolve(Library, "cuptiActivityEnable", Fn.ActivityEnable, Missing);
    resolve(Library, "cuptiActivityDisable", Fn.ActivityDisable, Missing);
    resolve(Library, "cuptiActivityRegisterCallbacks",
            Fn.ActivityRegisterCallbacks, Missing);
    resolve(Library, "cuptiActivityGetNextRecord", Fn.ActivityGetNextRecord,
            Missing);
    resolve(Library, "cuptiActivityGetNumDroppedRecords",
            Fn.ActivityGetNumDroppedRecords, Missing);
    resolve(Library, "cuptiActivityFlushAll", Fn.ActivityFlushAll, Missing);
    resolve(Library, "cuptiActivityPushExternalCorrelationId",
            Fn.ActivityPushExternalCorrelationId, Missing);
    resolve(Library, "cuptiActivityPopExternalCorrelationId",
            Fn.ActivityPopExternalCorrelationId, Missing);
    resolve(Library, "cuptiGetTimestamp", Fn.GetTimestamp, Missing);
    resolve(Library, "cuptiGetResultString", Fn.GetResultString, Missing);
    if (!Missing.empty()) {
      Failure += (Failure.empty() ? "" : "; ") + Path + " lacks " + Missing;
      dlclose(Library);
      continue;
    }
    Failure.clear();
    return makeCuptiActivityApi(Fn, Library);
  }
  Failure = "CUPTI could not be loaded: " + Failure;
  return nullptr;
}

std::vector<std::string> cuptiCandidates() {
  std::vector<std::string> Paths;
  if (const char *Explicit = std::getenv(env::CuptiLibrary);
      Explicit && *Explicit)
    Paths.push_back(Explicit);
  for (const char *Name : {"libcupti.so.13", "libcupti.so.12", "libcupti.so"})
    Paths.push_back(Name);
  std::vector<std::string> Roots;
  for (const char *Variable : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *Root = std::getenv(Variable); Root && *Root)
      Roots.push_back(Root);
  Roots.push_back("/usr/local/cuda");
  for (const std::string &Root : Roots)
    for (const char *Dir : {"/extras/CUPTI/lib64", "/lib64", "/lib"})
      Paths.push_back(Root + Dir + "/libcupti.so");
  return Paths;
}

} // namespace skyline::rt
