// report.html for a plan: prediction, memory per tier against capacity, step-time breakdown
// by resource, the memory accounting with formulas, and the ranked alternatives.
#pragma once

#include <string>

#include "core/hw_profile.h"
#include "core/plan.h"
#include "planner/search/search.h"

namespace zinf {

Status WritePlanReport(const Plan& best, const SearchResult& search, const HwProfile& hw, const std::string& path);

}  // namespace zinf
