// Compiled as if it were part of the spec layer: it includes the runtime
// layer (above spec), so it must not build.  CTest builds it and expects the
// build to fail (tests/CMakeLists.txt, layer_upward_include_build).
#include "sdk/runtime/backends.h"
#include "sdk/spec/event_spec.h"
