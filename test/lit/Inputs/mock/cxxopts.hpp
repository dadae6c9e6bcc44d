// A minimal stand-in for cxxopts: add_options()(names, help, value) and
// result["name"].as<T>(), enough for the front end's option tracing.
#pragma once
#include <memory>
#include <string>
namespace cxxopts {
class Value {
public:
  std::shared_ptr<Value> default_value(const std::string &) { return nullptr; }
};
template <typename T> std::shared_ptr<Value> value() { return std::make_shared<Value>(); }
class OptionAdder {
public:
  OptionAdder &operator()(const std::string &Names, const std::string &Help,
                          std::shared_ptr<Value> V = nullptr) {
    return *this;
  }
};
class OptionValue {
public:
  template <typename T> T as() const { return T(); }
};
class ParseResult {
public:
  const OptionValue &operator[](const std::string &) const { return V; }
  OptionValue V;
};
class Options {
public:
  Options(std::string Program, std::string Help = "") {}
  OptionAdder add_options() { return {}; }
  ParseResult parse(int, const char *const *) { return {}; }
};
} // namespace cxxopts
