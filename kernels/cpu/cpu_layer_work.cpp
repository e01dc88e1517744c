#include "kernels/cpu/cpu_layer_work.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>

#include "core/error.h"
#include "core/rng.h"
#include "kernels/cpu/layer_gemv.h"

namespace hb::cpu {

namespace {

constexpr DType kWeightType = DType::f16;  // core/layer_work.h: weights are 16-bit everywhere
static_assert(kLayerWeightBytesPerElement == 2);

// The filled weights of an (in, out, seed) matrix shared by the layer works alive (weak: the
// last one to go frees them).
std::shared_ptr<Buffer> shared_weights(const MemoryLocation& where, int in, int out,
                                       uint64_t seed) {
  static std::mutex mu;
  static std::map<std::tuple<int, int, uint64_t>, std::weak_ptr<Buffer>> cache;
  std::lock_guard<std::mutex> lk(mu);
  std::weak_ptr<Buffer>& slot = cache[{in, out, seed}];
  if (auto alive = slot.lock()) return alive;
  auto b = std::make_shared<Buffer>(
      host_allocator(where)->allocate(BlockedWeights::bytes(in, out, kWeightType)));
  BlockedWeights::over(static_cast<std::byte*>(b->data()), in, out, kWeightType).fill_random(seed);
  slot = b;
  return b;
}

// One weight matrix in accelerator memory: its own, or (charge given) the shared copy with its
// bytes charged to the budget. Unbacked (GEMMs never run: the caller times them from their
// traffic), the weights are only charged: filling 1.7 GB of a 70B layer per group would be most
// of such a caller's time.
struct Matrix {
  Buffer storage;                  // the weights, or the charge for the shared or absent ones
  std::shared_ptr<Buffer> shared;  // null: the weights are `storage`, or absent
  BlockedWeights w;
  Matrix(BufferAllocator& memory, int in, int out, uint64_t seed, const LayerCharge& charge,
         bool backed)
      : storage(charge ? charge(BlockedWeights::bytes(in, out, kWeightType))
                       : memory.allocate(BlockedWeights::bytes(in, out, kWeightType))),
        shared(charge && backed ? shared_weights(memory.location(), in, out, seed) : nullptr),
        w(BlockedWeights::over(weights(charge, backed), in, out, kWeightType)) {
    if (!charge) w.fill_random(seed);
  }

 private:
  std::byte* weights(const LayerCharge& charge, bool backed) {
    if (!charge) return static_cast<std::byte*>(storage.data());
    return backed ? static_cast<std::byte*>(shared->data()) : nullptr;
  }
};

class CpuLayerWork final : public LayerWork {
 public:
  CpuLayerWork(std::function<void(std::function<void()>)> enqueue, ThreadPool& pool,
               BufferAllocator& memory, const ModelPreset& model, int max_batch, uint64_t seed,
               const LayerCharge& charge, bool compute)
      : enqueue_(std::move(enqueue)),
        compute_(compute),
        pool_(pool),
        dims_(layer_dims(model)),
        max_batch_(max_batch),
        qkv_(memory, dims_.hidden, dims_.qkv_out, seed, charge, compute),
        o_(memory, dims_.attn_out, dims_.hidden, seed + 1, charge, compute),
        up_(memory, dims_.hidden, dims_.ffn, seed + 2, charge, compute),
        down_(memory, dims_.ffn, dims_.hidden, seed + 3, charge, compute),
        activations_(memory.allocate(activation_floats() * sizeof(float))) {
    if (dims_.gated)
      gate_ = std::make_unique<Matrix>(memory, dims_.hidden, dims_.ffn, seed + 4, charge, compute);
    float* p = static_cast<float*>(activations_.data());
    for (Slot s : {Slot::x, Slot::qkv, Slot::attn, Slot::y, Slot::up, Slot::gate, Slot::out}) {
      act_[static_cast<int>(s)] = p;
      p += static_cast<size_t>(max_batch_) * width(s);
    }
    Rng rng(seed + 5);  // inputs: fixed random rows, the layer's values are not the point
    for (Slot s : {Slot::x, Slot::attn}) {
      float* a = act_[static_cast<int>(s)];
      for (size_t i = 0; i < static_cast<size_t>(max_batch_) * width(s); ++i)
        a[i] = rng.uniformf(-1, 1);
    }
  }

  void enqueue_qkv(int batch) override {
    check(batch);
    run([this, batch] { gemv(qkv_.w, act(Slot::x), batch, act(Slot::qkv), pool_); });
  }
  void enqueue_out_proj(int batch) override {
    check(batch);
    run([this, batch] { gemv(o_.w, act(Slot::attn), batch, act(Slot::y), pool_); });
  }
  void enqueue_ffn(int batch) override {
    check(batch);
    run([this, batch] {
      gemv(up_.w, act(Slot::y), batch, act(Slot::up), pool_);
      if (gate_) gemv(gate_->w, act(Slot::y), batch, act(Slot::gate), pool_);
      activate(batch);
      gemv(down_.w, act(Slot::up), batch, act(Slot::out), pool_);
    });
  }
  int64_t weight_bytes() const override {
    return dims_.weight_elements() * kLayerWeightBytesPerElement;
  }
  int max_batch() const override { return max_batch_; }

 private:
  enum class Slot { x, qkv, attn, y, up, gate, out, count };

  int width(Slot s) const {
    switch (s) {
      case Slot::qkv:
        return dims_.qkv_out;
      case Slot::attn:
        return dims_.attn_out;
      case Slot::up:
        return dims_.ffn;
      case Slot::gate:
        return dims_.gated ? dims_.ffn : 0;
      default:
        return dims_.hidden;
    }
  }
  size_t activation_floats() const {
    size_t n = 0;
    for (int s = 0; s < static_cast<int>(Slot::count); ++s)
      n += static_cast<size_t>(max_batch_) * width(static_cast<Slot>(s));
    return std::max<size_t>(n, 1);
  }
  float* act(Slot s) { return act_[static_cast<int>(s)]; }
  void check(int batch) const {
    if (batch < 1 || batch > max_batch_)
      throw Error("layer work: batch " + std::to_string(batch) + " outside [1, " +
                      std::to_string(max_batch_) + "]",
                  "make the layer work for the largest micro-batch");
  }
  void run(std::function<void()> fn) {
    if (compute_) enqueue_(std::move(fn));
  }
  // SiLU(gate) * up for gated FFNs, ReLU(up) for OPT, in place in `up`.
  void activate(int batch) {
    float* up = act(Slot::up);
    const float* gate = act(Slot::gate);
    const size_t n = static_cast<size_t>(batch) * dims_.ffn;
    for (size_t i = 0; i < n; ++i)
      up[i] = dims_.gated ? up[i] * gate[i] / (1.0f + std::exp(-gate[i])) : std::max(up[i], 0.0f);
  }

  std::function<void(std::function<void()>)> enqueue_;
  bool compute_;  // false: the GEMMs are queued as nothing (their traffic is counted elsewhere)
  ThreadPool& pool_;
  LayerDims dims_;
  int max_batch_;
  Matrix qkv_, o_, up_, down_;
  std::unique_ptr<Matrix> gate_;
  Buffer activations_;
  float* act_[static_cast<int>(Slot::count)] = {};
};

}  // namespace

std::unique_ptr<LayerWork> make_cpu_layer_work(std::function<void(std::function<void()>)> enqueue,
                                               ThreadPool& pool, BufferAllocator& memory,
                                               const ModelPreset& model, int max_batch,
                                               uint64_t seed, LayerCharge charge, bool compute) {
  if (max_batch < 1)
    throw Error("layer work: max_batch must be at least 1, got " + std::to_string(max_batch), {});
  if (!compute && !charge)
    throw Error("layer work: GEMMs that never run need a budget charge for their weights",
                "pass a LayerCharge with compute = false");
  return std::make_unique<CpuLayerWork>(std::move(enqueue), pool, memory, model, max_batch, seed,
                                        charge, compute);
}

}  // namespace hb::cpu
