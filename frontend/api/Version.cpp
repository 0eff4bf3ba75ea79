// libgraphc.so's own translation unit: the package version, compiled in.
#include "frontend/api/Api.h"

namespace graphc {
std::string_view version() { return GRAPHC_VERSION; }
}  // namespace graphc
