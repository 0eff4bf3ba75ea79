/* The runtime's C API from C, linked against libgraphc-runtime.so alone:
 * loads the package of affine.graph (argv[1]), checks its signature, runs
 * it at two batch sizes against the same computation done here in double,
 * and checks that bad calls fail with a message. Exit 0 when all holds. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "graphc_runtime.h"

static const double kW[2][3] = {{0.5, -1.0, 2.0}, {1.5, 0.25, -0.75}};
static const double kB[2] = {0.125, -0.5};

static int check(int ok, const char* what) {
  if (!ok) fprintf(stderr, "run_package: FAILED: %s (%s)\n", what, graphc_last_error());
  return ok;
}

static int runBatch(graphc_model* m, int64_t batch) {
  float x[8 * 3];
  for (int i = 0; i < batch * 3; ++i) x[i] = (float)(i * 0.5 - 2.0);
  int64_t shape[2] = {batch, 3};
  graphc_tensor in = {GRAPHC_F32, 2, shape, x};
  if (!check(graphc_run(m, &in, 1) == 0, "graphc_run")) return 0;
  graphc_tensor out;
  if (!check(graphc_output(m, 0, &out) == 0, "graphc_output")) return 0;
  if (!check(out.dtype == GRAPHC_F32 && out.rank == 2 && out.shape[0] == batch && out.shape[1] == 2, "output type"))
    return 0;
  const float* y = (const float*)out.data;
  for (int i = 0; i < batch; ++i)
    for (int o = 0; o < 2; ++o) {
      double want = kB[o];
      for (int k = 0; k < 3; ++k) want += x[i * 3 + k] * kW[o][k];
      if (want < 0) want = 0;
      if (fabs(y[i * 2 + o] - want) > 1e-5) {
        fprintf(stderr, "run_package: y[%d][%d] = %g, expected %g\n", i, o, y[i * 2 + o], want);
        return 0;
      }
    }
  printf("batch %lld: %d outputs match\n", (long long)batch, (int)(batch * 2));
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: run_package affine.gcpkg\n");
    return 2;
  }
  graphc_model* m = NULL;
  if (!check(graphc_load("/nonexistent/model.gcpkg", &m) != 0 && m == NULL && strlen(graphc_last_error()) > 0,
             "loading a missing file fails"))
    return 1;
  if (!check(graphc_load(argv[1], &m) == 0, "graphc_load")) return 1;
  int ok = check(graphc_num_inputs(m) == 1 && graphc_num_outputs(m) == 1, "one input, one output") &&
           check(strcmp(graphc_input_name(m, 0), "x") == 0, "the input is x") &&
           check(strcmp(graphc_input_type(m, 0), "f32[B, 3]") == 0, "its type keeps the symbolic batch") &&
           runBatch(m, 4) && runBatch(m, 7);
  int64_t shape[2] = {2, 3};
  double wrong[6] = {0};
  graphc_tensor bad = {GRAPHC_F64, 2, shape, wrong};
  ok = ok && check(graphc_run(m, &bad, 1) != 0 && strstr(graphc_last_error(), "f64") != NULL,
                   "an f64 input is refused, naming its type");
  /* The failed run left no outputs: the previous run's are not handed out. */
  ok = ok && check(graphc_output(m, 0, &bad) != 0 && strstr(graphc_last_error(), "failed") != NULL,
                   "no output after a failed run");
  ok = ok && runBatch(m, 2) && check(graphc_output(m, 5, &bad) != 0, "a missing output is refused");
  printf("runtime %s: %s\n", graphc_runtime_version(), ok ? "ok" : "FAILED");
  graphc_free(m);
  return ok ? 0 : 1;
}
