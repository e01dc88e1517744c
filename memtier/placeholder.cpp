// memtier is filled in by its own issue; this keeps the target non-empty until then.
namespace hb::memtier {}
