// The report page's script and style sheet, src/output/report/report.js and
// report.css, as the build embedded them (cmake/embed_report_assets.cmake):
// their exact bytes, and the script's SHA-256 (standard base64) that the
// page's Content-Security-Policy allows it by. The hash is computed by the
// build from the same file, so it always matches the bytes.
#pragma once

#include <string_view>

namespace ppt {

std::string_view report_script_text();
std::string_view report_style_text();
std::string_view report_script_sha256();

}  // namespace ppt
