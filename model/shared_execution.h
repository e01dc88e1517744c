#pragma once
// Model mode's shared executions: what a strategy selects and moves does not depend on the
// platform that prices it, so a strategy that plans alike on several platforms (plan_signature:
// e.g. every platform where its KV fits) executes once, and each platform's contender records
// the same steps, priced by its own platform's pricer (model/step_pricer.h).
#include <memory>
#include <string>
#include <vector>

#include "bench/accuracy.h"
#include "bench/contender.h"
#include "bench/step_observer.h"
#include "bench/sweep_run.h"

namespace hb::model {

// What of a planned contender decides how its strategy executes: the plan's status, reason,
// warnings and parameters (the decisions strategies draw from the accelerator's capacity and
// the tiers' free bytes, which they read in plan() only, and the host tiers they chose beyond
// the first) and its first host tier. Two contenders of one unit with the same signature execute
// the same steps.
std::string plan_signature(const bench::Contender& c);

// A platform's contender and its pricer's record of it (StepPricer::observe; null: not planned),
// which puts each step's price in place of its timing.
struct PricedContender {
  std::unique_ptr<bench::Contender> c;
  std::unique_ptr<bench::StepObserver::PointRecord> priced;
};

// One execution of a strategy: the leader's, recorded by the leader and by its followers
// (contenders of other platforms that planned alike and do not run their own).
struct SharedExecution {
  PricedContender* leader = nullptr;
  std::vector<PricedContender*> followers;
  // The leader and followers still recording (active), leader first.
  std::vector<PricedContender*> recorders() const;
};

// Makes `f` (planned, same signature as the leader) record e's steps: false, and nothing
// changes, when the leader's loaded strategy holds more accelerator memory than f's capacity
// (f's own load would have failed) or the leader is not running.
bool follow(SharedExecution& e, PricedContender& f);

// Steps e's strategy over the decode positions once (a modeled step priced again is the same
// step: no replays), recording each step as each recorder's, closing rounds as the measured loop
// does, until its recorders stop (bench/round_close.h); a follower then gets the executed
// trajectory. False when a stop was requested.
bool run_execution(bench::SweepRun& run, SharedExecution& e, bench::ReferenceOracle& oracle,
                   const std::string& where);

}  // namespace hb::model
