// The sentences of what whatif and stats' suggestions say besides their
// figures (analysis/advice.h): each warning, refusal, assumption and
// suggestion, and the outcomes' labels, made here once for every writer that
// shows them (whatif's table, JSON and page, stats' text, Markdown, HTML and
// JSON, the report).
#pragma once

#include <string>
#include <vector>

#include "analysis/advice.h"
#include "analysis/stats.h"
#include "analysis/whatif.h"

namespace ppt {

// "rank 1 step 0, job 2: forward:1 where the plan has backward:0", the jobs
// named as `shape`'s plan names them.
std::string plan_difference_text(const PlanDifference& d, const PlanShape& shape);

std::string warning_text(const ModelWarning& warning);
std::vector<std::string> warning_texts(const std::vector<ModelWarning>& warnings);
std::string refusal_text(const model_warning::Refusal& refusal);

std::string assumption_text(const Assumption& assumption);
std::vector<std::string> assumption_texts(const std::vector<Assumption>& assumptions);

// "ZBH1 M=8", "VPP M=16 V=2".
std::string shape_label(const PlanShape& shape);
// An outcome's label: its shape's, or its schedule's name alone
// (WhatifOutcome::named_by_schedule).
std::string outcome_label(const WhatifOutcome& outcome);
// Why an outcome has no figures: its error, or the report's refusal; "" when
// it has them.
std::string outcome_error(const WhatifOutcome& outcome, const WhatifReport& report);

// "ZBH1", "VPP V=2", "M=16", "balancing stage 2", "balancing the stages".
std::string change_text(const SuggestedChange& change);
// "ZBH1: -17% period (-15.0% to -19.0%), same peak memory", with what Paddle
// asserts of the shape where it would refuse it.
std::string suggestion_text(const WhatifSuggestion& suggestion);

}  // namespace ppt
