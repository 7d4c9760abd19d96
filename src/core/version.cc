#include "singa/core/version.h"

namespace singa {

const char* Version() { return SINGA_VERSION; }

}  // namespace singa
