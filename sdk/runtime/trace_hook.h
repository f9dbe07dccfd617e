// TraceHook: a session's trace (trace/trace_collector.h) attached to its
// recorder's boundaries: every region and marker call that ends is one
// record in its thread's buffer, with its counts where it opened and
// closed its path; the recorder's clock reads CLOCK_MONOTONIC (the trace's
// times); every snapshot reaches the collector (its counter tracks).
//
//   TraceHook hook(collector.get());       // outlives the recorder
//   RecorderOptions o;  o.hooks.push_back(&hook);
//   Recorder recorder(device, o);          // names paths for the trace
//
// Guarantees: a call costs what TraceCollector::RecordCall costs (no lock,
// no allocation until its buffer is full); a thread's buffer is attached
// on its state's first use and handed over when the thread exits.
#ifndef UNCORE_SDK_RUNTIME_TRACE_HOOK_H_
#define UNCORE_SDK_RUNTIME_TRACE_HOOK_H_

#include <cstdint>

#include "sdk/regions/boundary_hook.h"
#include "sdk/regions/recorder.h"
#include "sdk/trace/trace_collector.h"

namespace uncore::runtime {

class TraceHook final : public regions::BoundaryHook {
 public:
  explicit TraceHook(trace::TraceCollector* trace) : trace_(trace) {}

  bool wants_monotonic_clock() const override { return true; }
  bool wants_call_counts() const override { return true; }
  void Attached(regions::Recorder& recorder) override;
  void* ThreadAttached() override { return trace_->AttachThread(); }
  void ThreadDetached(void* thread_data) override;
  void CallEnded(void* thread_data, int path, uint64_t begin, uint64_t end,
                 bool marker, bool open, const uint64_t* counts) override;

 private:
  trace::TraceCollector* const trace_;
};

}  // namespace uncore::runtime

#endif  // UNCORE_SDK_RUNTIME_TRACE_HOOK_H_
