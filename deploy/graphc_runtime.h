/* graphc's runtime C API: load an exported package (`graphc export`,
 * docs/export.md) and run it, from C or any language with a C FFI, linking
 * only libgraphc-runtime.so (no compiler: no LLVM, parser, passes or
 * protobuf).
 *
 *   graphc_model* m;
 *   if (graphc_load("mlp.gcpkg", &m) != 0) { puts(graphc_last_error()); return 1; }
 *   int64_t shape[] = {2, 784};
 *   graphc_tensor x = {GRAPHC_F32, 2, shape, data};
 *   if (graphc_run(m, &x, 1) != 0) { ... }
 *   graphc_tensor y;
 *   graphc_output(m, 0, &y);    // valid until the next run or graphc_free
 *                                // (a failed run leaves no outputs: -1)
 *   graphc_free(m);
 *
 * Every function returns 0 on success and -1 on failure, with the reason in
 * graphc_last_error() (per thread). Inputs are read in place (C-contiguous,
 * their dtype exactly the graph's); symbolic sizes are bound from them. A
 * model may be run from one thread at a time (a second thread: a second
 * model, or the C++ Executable, which any number of threads may share). */
#ifndef GRAPHC_RUNTIME_H
#define GRAPHC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The element types, as graphc's .graph language names them. */
typedef enum {
  GRAPHC_F16 = 0,
  GRAPHC_BF16 = 1,
  GRAPHC_F32 = 2,
  GRAPHC_F64 = 3,
  GRAPHC_I8 = 4,
  GRAPHC_I32 = 5,
  GRAPHC_I64 = 6,
  GRAPHC_BOOL = 7
} graphc_dtype;

/* A dense C-ordered tensor the caller owns (inputs) or graphc owns
 * (outputs). */
typedef struct {
  graphc_dtype dtype;
  int32_t rank;
  const int64_t* shape;
  void* data;
} graphc_tensor;

typedef struct graphc_model graphc_model;

int graphc_load(const char* path, graphc_model** model);
void graphc_free(graphc_model* model);

size_t graphc_num_inputs(const graphc_model* model);
size_t graphc_num_outputs(const graphc_model* model);
/* The input's name in the graph, and its type as text ("f32[B, 784]"). */
const char* graphc_input_name(const graphc_model* model, size_t index);
const char* graphc_input_type(const graphc_model* model, size_t index);

int graphc_run(graphc_model* model, const graphc_tensor* inputs, size_t count);
int graphc_output(const graphc_model* model, size_t index, graphc_tensor* out);

const char* graphc_last_error(void);
/* The version of graphc this runtime is ("0.1.0"). */
const char* graphc_runtime_version(void);

#ifdef __cplusplus
}
#endif

#endif /* GRAPHC_RUNTIME_H */
