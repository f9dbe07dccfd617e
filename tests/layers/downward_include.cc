// The same as upward_include.cc, with an include the spec layer may make: it
// must build, so the upward probe fails for its include and nothing else.
#include "sdk/platforms/ivytown/model/box_descriptors.h"
#include "sdk/spec/event_spec.h"
