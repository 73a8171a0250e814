// Reading flatbuffers vectors safely: liteexport/cpp/fb_vectors.h, shared with the torch extension.
#pragma once

#include "fb_vectors.h"
