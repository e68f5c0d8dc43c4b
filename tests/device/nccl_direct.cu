// NCCL all-reduce timed without torch: one process drives every visible GPU (ncclCommInitAll), like
// nccl-tests' all_reduce_perf -g N. An independent check of the collection's all-reduce probe
// (plugins/module_utils/allreduce_probe.py) and a way to tell NCCL's own behaviour from the probe's.
//
// For each size (bf16) and each mode it prints one JSON line:
//   eager_oop      ncclAllReduce(send, recv) launched back to back, host time / iterations (nccl-tests' method)
//   eager_inplace  the same with send == recv
//   graph_oop      --per-graph all-reduces captured in one CUDA graph per GPU, replayed; per op = replay / per-graph
//   graph_inplace  the same with send == recv (what the torch probe does: dist.all_reduce is in place)
// Graph modes also report the median and p99 over replays (CUDA events on GPU 0's stream).
//
// Build: nvcc -O2 -o nccl_direct nccl_direct.cu -I<nccl>/include -L<nccl>/lib -lnccl
// Run:   ./nccl_direct [warmup iterations per_graph]   (defaults 50 1000 20, as nccl-tests -w 50 -n 1000)
//        ./nccl_direct warmup iterations per_graph NPROCS   one process per GPU instead (see run_rank)
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

// A failed CUDA or NCCL call: one JSON error line, then exit with the code the kind has (cuda 2, nccl 3).
[[noreturn]] static void fail(const char* kind, const char* msg, int line, int code) {
  std::printf("{\"nccl_direct\": 1, \"error\": \"%s\", \"msg\": \"%s at line %d\"}\n", kind, msg, line);
  std::exit(code);
}
#define CK(x)                                                                 \
  do {                                                                        \
    cudaError_t e_ = (x);                                                     \
    if (e_ != cudaSuccess) fail("cuda", cudaGetErrorString(e_), __LINE__, 2); \
  } while (0)
#define NK(x)                                                                 \
  do {                                                                        \
    ncclResult_t r_ = (x);                                                    \
    if (r_ != ncclSuccess) fail("nccl", ncclGetErrorString(r_), __LINE__, 3); \
  } while (0)

static double pct(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  double pos = (v.size() - 1) * q / 100.0;
  size_t lo = (size_t)pos;
  size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - lo);
}

// Eager timing (nccl-tests' method): warmup launches, then the host clock around iters back-to-back launches
// and a sync; returns the mean per launch in microseconds.
template <class Launch, class Sync>
static double eager_mean_us(int warmup, int iters, Launch launch, Sync sync) {
  for (int i = 0; i < warmup; ++i) launch();
  sync();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) launch();
  sync();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / iters;
}

// Graph timing: replays of a graph of per_graph all-reduces, each between two CUDA events recorded on
// `stream` (created on the current device; `replay` must leave that device current again). Sets *mean_us
// to the host-clock mean per all-reduce and returns each replay's event time per all-reduce, in microseconds.
template <class Replay, class Sync>
static std::vector<double> graph_per_op_us(cudaStream_t stream, int replays, int per_graph, Replay replay, Sync sync,
                                           double* mean_us) {
  std::vector<cudaEvent_t> ev(2 * replays);
  for (auto& e : ev) CK(cudaEventCreate(&e));
  auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < replays; ++r) {
    CK(cudaEventRecord(ev[2 * r], stream));
    replay();
    CK(cudaEventRecord(ev[2 * r + 1], stream));
  }
  sync();
  *mean_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
             (double(replays) * per_graph);
  std::vector<double> per_op(replays);
  for (int r = 0; r < replays; ++r) {
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, ev[2 * r], ev[2 * r + 1]));
    per_op[r] = ms * 1000.0 / per_graph;
  }
  for (auto& e : ev) CK(cudaEventDestroy(e));
  return per_op;
}

// One process per GPU (as SGLang and the torch probe run), ranks joined with ncclCommInitRank; rank 0 prints.
// In place, eager (host clock) and CUDA graphs of 5, 20 and 100 all-reduces.
static int run_rank(int rank, int nranks, ncclUniqueId id, int warmup, int iters) {
  CK(cudaSetDevice(rank));
  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  void* buf;
  const size_t max_bytes = 1048576;
  CK(cudaMalloc(&buf, max_bytes));
  CK(cudaMemset(buf, 0, max_bytes));
  ncclComm_t comm;
  NK(ncclCommInitRank(&comm, nranks, id, rank));
  int version = 0;
  NK(ncclGetVersion(&version));
  const size_t sizes[] = {4096, 16384, 65536, 262144, 1048576};
  for (size_t bytes : sizes) {
    size_t count = bytes / 2;
    auto sync = [&]() { CK(cudaStreamSynchronize(stream)); };
    double us = eager_mean_us(
        warmup, iters, [&]() { NK(ncclAllReduce(buf, buf, count, ncclBfloat16, ncclSum, comm, stream)); }, sync);
    if (rank == 0)
      std::printf("{\"nccl_direct\": 1, \"nccl\": %d, \"world_size\": %d, \"procs\": \"one_per_gpu\", "
                  "\"mode\": \"eager_inplace\", \"bytes\": %zu, \"mean_us\": %.3f, \"iterations\": %d}\n",
                  version, nranks, bytes, us, iters);
    const int per_graphs[] = {5, 20, 100};
    for (int per_graph : per_graphs) {
      cudaGraph_t graph;
      cudaGraphExec_t exec;
      CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
      for (int i = 0; i < per_graph; ++i) NK(ncclAllReduce(buf, buf, count, ncclBfloat16, ncclSum, comm, stream));
      CK(cudaStreamEndCapture(stream, &graph));
      CK(cudaGraphInstantiate(&exec, graph, 0));
      for (int i = 0; i < 3; ++i) CK(cudaGraphLaunch(exec, stream));
      CK(cudaStreamSynchronize(stream));
      int replays = std::max(1, iters / per_graph);
      std::vector<double> per_op =
          graph_per_op_us(stream, replays, per_graph, [&]() { CK(cudaGraphLaunch(exec, stream)); }, sync, &us);
      if (rank == 0)
        std::printf("{\"nccl_direct\": 1, \"nccl\": %d, \"world_size\": %d, \"procs\": \"one_per_gpu\", "
                    "\"mode\": \"graph_inplace\", \"bytes\": %zu, \"mean_us\": %.3f, \"median_us\": %.3f, "
                    "\"p99_us\": %.3f, \"per_graph\": %d, \"replays\": %d}\n",
                    version, nranks, bytes, us, pct(per_op, 50), pct(per_op, 99), per_graph, replays);
      std::fflush(stdout);
      CK(cudaGraphExecDestroy(exec));
      CK(cudaGraphDestroy(graph));
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  int warmup = argc > 1 ? std::atoi(argv[1]) : 50;
  int iters = argc > 2 ? std::atoi(argv[2]) : 1000;
  int per_graph = argc > 3 ? std::atoi(argv[3]) : 20;
  if (argc > 4) {
    // ./nccl_direct W N G NPROCS: one forked process per GPU. The parent touches no CUDA before fork.
    int nranks = std::atoi(argv[4]);
    ncclUniqueId id;
    NK(ncclGetUniqueId(&id));
    std::vector<pid_t> kids;
    for (int r = 0; r < nranks; ++r) {
      pid_t pid = fork();
      if (pid == 0) {
        std::fflush(stdout);
        _exit(run_rank(r, nranks, id, warmup, iters));
      }
      kids.push_back(pid);
    }
    int rc = 0;
    for (pid_t pid : kids) {
      int status = 0;
      waitpid(pid, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) rc = 1;
    }
    return rc;
  }
  int ndev = 0;
  CK(cudaGetDeviceCount(&ndev));
  if (ndev < 2) {
    std::printf("{\"nccl_direct\": 1, \"error\": \"too_few_gpus\", \"msg\": \"%d visible\"}\n", ndev);
    return 2;
  }
  std::vector<int> devs(ndev);
  for (int i = 0; i < ndev; ++i) devs[i] = i;
  std::vector<ncclComm_t> comms(ndev);
  NK(ncclCommInitAll(comms.data(), ndev, devs.data()));
  int version = 0;
  NK(ncclGetVersion(&version));
  const size_t sizes[] = {4096, 16384, 65536, 262144, 1048576};
  const size_t max_bytes = 1048576;
  std::vector<cudaStream_t> streams(ndev);
  std::vector<void*> send(ndev), recv(ndev);
  for (int d = 0; d < ndev; ++d) {
    CK(cudaSetDevice(d));
    CK(cudaStreamCreateWithFlags(&streams[d], cudaStreamNonBlocking));
    CK(cudaMalloc(&send[d], max_bytes));
    CK(cudaMalloc(&recv[d], max_bytes));
    CK(cudaMemset(send[d], 0, max_bytes));
    CK(cudaMemset(recv[d], 0, max_bytes));
  }
  auto sync_all = [&]() {
    for (int d = 0; d < ndev; ++d) {
      CK(cudaSetDevice(d));
      CK(cudaStreamSynchronize(streams[d]));
    }
  };
  auto launch = [&](size_t count, bool inplace) {
    NK(ncclGroupStart());
    for (int d = 0; d < ndev; ++d)
      NK(ncclAllReduce(inplace ? recv[d] : send[d], recv[d], count, ncclBfloat16, ncclSum, comms[d], streams[d]));
    NK(ncclGroupEnd());
  };
  for (size_t bytes : sizes) {
    size_t count = bytes / 2;
    for (int inplace = 0; inplace < 2; ++inplace) {
      // Eager: nccl-tests' timing (host clock around iterations back-to-back launches, then a sync).
      double us = eager_mean_us(warmup, iters, [&]() { launch(count, inplace); }, sync_all);
      std::printf("{\"nccl_direct\": 1, \"nccl\": %d, \"world_size\": %d, \"mode\": \"eager_%s\", \"bytes\": %zu, "
                  "\"mean_us\": %.3f, \"iterations\": %d}\n",
                  version, ndev, inplace ? "inplace" : "oop", bytes, us, iters);
      std::fflush(stdout);

      // Graph: per_graph all-reduces captured per GPU, replays timed with events on GPU 0.
      std::vector<cudaGraph_t> graphs(ndev);
      std::vector<cudaGraphExec_t> execs(ndev);
      for (int d = 0; d < ndev; ++d) {
        CK(cudaSetDevice(d));
        CK(cudaStreamBeginCapture(streams[d], cudaStreamCaptureModeGlobal));
      }
      for (int i = 0; i < per_graph; ++i) launch(count, inplace);
      // End every capture before instantiating: in global capture mode no graph may be instantiated while
      // another stream is still capturing.
      for (int d = 0; d < ndev; ++d) {
        CK(cudaSetDevice(d));
        CK(cudaStreamEndCapture(streams[d], &graphs[d]));
      }
      for (int d = 0; d < ndev; ++d) {
        CK(cudaSetDevice(d));
        CK(cudaGraphInstantiate(&execs[d], graphs[d], 0));
      }
      auto replay = [&]() {
        for (int d = 0; d < ndev; ++d) {
          CK(cudaSetDevice(d));
          CK(cudaGraphLaunch(execs[d], streams[d]));
        }
      };
      for (int i = 0; i < 3; ++i) replay();
      sync_all();
      int replays = std::max(1, iters / per_graph);
      CK(cudaSetDevice(0));  // the events live on GPU 0; replay() moves through every GPU, so back to 0 after it
      std::vector<double> per_op = graph_per_op_us(
          streams[0], replays, per_graph,
          [&]() {
            replay();
            CK(cudaSetDevice(0));
          },
          sync_all, &us);
      std::printf("{\"nccl_direct\": 1, \"nccl\": %d, \"world_size\": %d, \"mode\": \"graph_%s\", \"bytes\": %zu, "
                  "\"mean_us\": %.3f, \"median_us\": %.3f, \"p99_us\": %.3f, \"per_graph\": %d, \"replays\": %d}\n",
                  version, ndev, inplace ? "inplace" : "oop", bytes, us, pct(per_op, 50), pct(per_op, 99), per_graph,
                  replays);
      std::fflush(stdout);
      for (int d = 0; d < ndev; ++d) {
        CK(cudaGraphExecDestroy(execs[d]));
        CK(cudaGraphDestroy(graphs[d]));
      }
    }
  }
  // No ncclCommDestroy: the torch probe hung in communicator teardown after graph capture on this
  // machine; the process exit releases everything.
  return 0;
}
