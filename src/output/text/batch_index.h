// The index files of a batch, written into its output directory:
// index.json (its schema: docs/schemas/batch-index.v1.json), summary.md (for
// a CI step summary or a pull-request comment) and index.html.
#pragma once

#include <string>

#include "analysis/batch_result.h"

namespace ppt {

std::string batch_index_json(const BatchResult& result);
std::string batch_summary_markdown(const BatchResult& result);
std::string batch_index_html(const BatchResult& result);

}  // namespace ppt
