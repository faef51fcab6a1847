// A lower layer that reaches up: LayerCheck must reject it.
#include "high/b.hpp"
