// The cpu backend's threads, as the API offers them: the process-wide pool,
// or the team of an OpenMP runtime the host process already runs.
#include "frontend/api/Api.h"
#include "runtime/cpu/OpenMpTeam.h"

namespace graphc {
std::string runOnLoadedOpenMpTeam() { return runtime::runOnLoadedOpenMpTeam(); }
}  // namespace graphc
