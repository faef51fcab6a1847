// The upper layer.
#pragma once
#include "low/a.hpp"
