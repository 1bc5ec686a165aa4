#pragma once
// The metrics registry is shared by every layer (config/metrics.hpp).
#include "config/metrics.hpp"
