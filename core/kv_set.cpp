#include "core/kv_set.h"

namespace hb {

KvSet::KvSet(const Problem& problem, std::shared_ptr<BufferAllocator> k_alloc,
             std::shared_ptr<BufferAllocator> v_alloc)
    : problem_(problem) {
  for (int b = 0; b < problem.batch; ++b)
    caches_.push_back(std::make_unique<PagedKvCache>(problem.shape, problem.page_tokens));
  const size_t block = caches_.empty() ? 0 : caches_[0]->block_bytes();
  const bool shared = k_alloc == v_alloc;
  k_arena_ = std::make_unique<PageArena>(std::move(k_alloc), block, 1024);
  if (shared) {
    v_arena_ = k_arena_.get();
  } else {
    v_arena_owned_ = std::make_unique<PageArena>(std::move(v_alloc), block, 1024);
    v_arena_ = v_arena_owned_.get();
  }
}

int64_t KvSet::bytes_per_token() const { return problem_.shape.kv_bytes_per_token(); }

int64_t KvSet::bytes_for(int64_t tokens) const {
  const int64_t pages = (tokens + problem_.page_tokens - 1) / problem_.page_tokens;
  return pages * problem_.page_tokens * bytes_per_token() * problem_.batch;
}

void KvSet::reserve_tokens(int64_t tokens) {
  const int64_t pages = (tokens + problem_.page_tokens - 1) / problem_.page_tokens;
  const size_t blocks = static_cast<size_t>(pages) * problem_.shape.kv_heads * problem_.batch;
  if (v_arena_ == k_arena_.get()) {
    k_arena_->reserve(2 * blocks);
  } else {
    k_arena_->reserve(blocks);
    v_arena_->reserve(blocks);
  }
}

void KvSet::append_prompt(int64_t begin, int64_t end, ThreadPool* pool) {
  for (int b = 0; b < batch(); ++b)
    caches_[b]->append(problem_.workloads[b].prompt, begin, end, *k_arena_, *v_arena_, pool);
}

int64_t KvSet::append_step(int s) {
  for (int b = 0; b < batch(); ++b) {
    const DecodeStep& st = problem_.workloads[b].step(s);
    caches_[b]->append_token(st.k.data(), st.v.data(), *k_arena_, *v_arena_);
  }
  return bytes_per_token() * batch();
}

std::vector<MemoryRegion> KvSet::regions(const std::string& prefix) const {
  std::vector<MemoryRegion> r;
  const bool shared = v_arena_ == k_arena_.get();
  for (const auto& [p, n] : k_arena_->slabs())
    r.push_back({p, n, k_arena_->location(), prefix + (shared ? "K+V" : "K")});
  if (!shared)
    for (const auto& [p, n] : v_arena_->slabs())
      r.push_back({p, n, v_arena_->location(), prefix + "V"});
  return r;
}

}  // namespace hb
