#include "sdk/runtime/trace_hook.h"

#include <cstdint>

#include "sdk/devices/shared_snapshots.h"
#include "sdk/regions/recorder.h"
#include "sdk/trace/trace_collector.h"

namespace uncore::runtime {

void TraceHook::Attached(regions::Recorder& recorder) {
  if (devices::SharedSnapshots* snapshots = recorder.shared_snapshots()) {
    snapshots->SetObserver(trace_);
  }
  trace_->SetPathNames(
      [&recorder](int path) { return recorder.PathNames(path); });
}

void TraceHook::ThreadDetached(void* thread_data) {
  if (thread_data != nullptr) {
    trace_->DetachThread(
        static_cast<trace::TraceCollector::ThreadLog*>(thread_data));
  }
}

void TraceHook::CallEnded(void* thread_data, int path, uint64_t begin,
                          uint64_t end, bool marker, bool open,
                          const uint64_t* counts) {
  if (thread_data == nullptr) return;
  trace_->RecordCall(
      static_cast<trace::TraceCollector::ThreadLog*>(thread_data), path, begin,
      end, marker, open, counts);
}

}  // namespace uncore::runtime
