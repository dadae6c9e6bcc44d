// A minimal stand-in for Boost.Program_options: add_options()(name, value,
// help) with a typed default_value, and vm["name"].as<T>().
#pragma once
#include <map>
#include <string>
namespace boost {
namespace program_options {
class value_semantic {
public:
  virtual ~value_semantic() = default;
};
template <typename T> class typed_value : public value_semantic {
public:
  typed_value *default_value(const T &) { return this; }
};
template <typename T> typed_value<T> *value() { return new typed_value<T>(); }
class options_description_easy_init {
public:
  options_description_easy_init &operator()(const char *Name,
                                            const char *Help) {
    return *this;
  }
  options_description_easy_init &
  operator()(const char *Name, const value_semantic *S, const char *Help) {
    return *this;
  }
};
class options_description {
public:
  explicit options_description(const std::string &Caption = "") {}
  options_description_easy_init add_options() { return {}; }
};
class variable_value {
public:
  template <typename T> const T &as() const {
    static T Value{};
    return Value;
  }
};
class variables_map : public std::map<std::string, variable_value> {};
} // namespace program_options
} // namespace boost
