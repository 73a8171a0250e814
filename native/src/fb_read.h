// Reading flatbuffers vectors safely: native_format/decoder/fb_vectors.h, shared with the torch extension.
#pragma once

#include "fb_vectors.h"
