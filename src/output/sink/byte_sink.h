// Where writers put their bytes: a file (OutputFile) or memory (StringSink).
#pragma once

#include <string>
#include <string_view>

namespace ppt {

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual void write(std::string_view bytes) = 0;
};

class StringSink : public ByteSink {
 public:
  void write(std::string_view bytes) override { data.append(bytes); }
  std::string data;
};

}  // namespace ppt
