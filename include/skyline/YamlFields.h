//===- YamlFields.h - Reading checked values from YAML ----------*- C++ -*-===//
//
// The readers of files skyline-check is handed (a report, a run's result)
// read each value through YamlFields: a value of the wrong type, or a number
// that is not finite or below its least, throws BadValue with the path of
// keys that leads to it (runs[2].iteration_ms.median), which the reader
// turns into an error naming the file.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_YAMLFIELDS_H
#define SKYLINE_YAMLFIELDS_H

#include "skyline/runtime/RunFormat.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <string>
#include <type_traits>

namespace skyline {

/// A value no file of skyline-check's holds: where it is
/// (runs[2].iteration_ms.median) and what is wrong with it ("is .nan; it must
/// be a finite number above 0").
struct BadValue {
  std::string Key, Problem;
};

/// How a value is quoted in a message.
inline std::string quotedValue(const YAML::Node &Value) {
  if (!Value || Value.IsNull())
    return "missing";
  if (Value.IsScalar())
    return "'" + Value.Scalar() + "'";
  return Value.IsSequence() ? "a list" : "a mapping";
}

template <typename T> const char *valueKindOf() {
  if constexpr (std::is_same_v<T, bool>)
    return "true or false";
  else if constexpr (std::is_same_v<T, std::string>)
    return "text";
  else if constexpr (std::is_floating_point_v<T>)
    return "a number";
  else if constexpr (std::is_unsigned_v<T>)
    return "a whole number of at least 0";
  else
    return "a whole number";
}

template <typename T>
T convertValue(const YAML::Node &Value, const std::string &Key) {
  try {
    return Value.as<T>();
  } catch (const YAML::Exception &) {
    throw BadValue{Key, "is " + quotedValue(Value) + "; it must be " +
                            valueKindOf<T>()};
  }
}

/// The least a number may be.
enum class Least { Zero, AboveZero, One };

/// Checks a number a file holds: finite, and not below its least.
template <typename T>
T checkedNumber(const YAML::Node &Value, const std::string &Key, Least Bound) {
  T Number = convertValue<T>(Value, Key);
  const char *Must = Bound == Least::Zero        ? "of at least 0"
                     : Bound == Least::AboveZero ? "above 0"
                                                 : "of at least 1";
  bool Finite = true;
  if constexpr (std::is_floating_point_v<T>)
    Finite = std::isfinite(Number);
  bool InRange = Bound == Least::Zero        ? Number >= 0
                 : Bound == Least::AboveZero ? Number > 0
                                             : Number >= 1;
  if (!Finite || !InRange)
    throw BadValue{Key, "is " + quotedValue(Value) + "; it must be " +
                            (std::is_floating_point_v<T>
                                 ? std::string("a finite number ")
                                 : std::string("a whole number ")) +
                            Must};
  return Number;
}

/// A mapping of the file and the path of keys that leads to it.
class YamlFields {
public:
  YamlFields(const YAML::Node &Node, std::string Where)
      : Node(Node), Where(std::move(Where)) {
    if (Node && !Node.IsNull() && !Node.IsMap())
      throw BadValue{this->Where,
                     "is " + quotedValue(Node) + "; it must be a mapping"};
  }

  std::string key(const std::string &Name) const {
    return Where.empty() ? Name : Where + "." + Name;
  }
  /// The value at Name; an undefined node when there is none (or null).
  YAML::Node operator[](const char *Name) const {
    if (!Node || !Node.IsMap())
      return YAML::Node(YAML::NodeType::Undefined);
    YAML::Node Value = Node[Name];
    return Value && !Value.IsNull() ? Value
                                    : YAML::Node(YAML::NodeType::Undefined);
  }
  YamlFields sub(const char *Name) const {
    return YamlFields((*this)[Name], key(Name));
  }

  template <typename T> T get(const char *Name, T Default = T()) const {
    YAML::Node Value = (*this)[Name];
    return Value ? convertValue<T>(Value, key(Name)) : Default;
  }
  /// A number that must be finite and at least Bound; Default when absent.
  template <typename T>
  T number(const char *Name, Least Bound, T Default = T()) const {
    YAML::Node Value = (*this)[Name];
    return Value ? checkedNumber<T>(Value, key(Name), Bound) : Default;
  }
  /// Each entry of the list at Name with its key path (runs[2]).
  template <typename Fn> void forEach(const char *Name, Fn Each) const {
    YAML::Node List = (*this)[Name];
    if (!List)
      return;
    if (!List.IsSequence())
      throw BadValue{key(Name),
                     "is " + quotedValue(List) + "; it must be a list"};
    for (size_t I = 0; I < List.size(); ++I)
      Each(List[I], key(Name) + "[" + std::to_string(I) + "]");
  }
  /// Each key and value of the mapping at Name.
  template <typename Fn> void forEachEntry(const char *Name, Fn Each) const {
    YamlFields Map = sub(Name);
    if (!Map.Node || Map.Node.IsNull())
      return;
    for (const auto &Entry : Map.Node) {
      std::string Key = convertValue<std::string>(Entry.first, Map.Where);
      Each(Key, Entry.second, Map.key(Key));
    }
  }

private:
  YAML::Node Node;
  std::string Where;
};

/// "a, b or c": the names a value of Enum (runtime/RunFormat.h) may take.
template <typename Enum> std::string namesOf() {
  std::string Names;
  const size_t Count = std::size(rt::EnumNames<Enum>::Names);
  for (size_t I = 0; I < Count; ++I) {
    Names += I == 0 ? "" : I + 1 == Count ? " or " : ", ";
    Names += rt::EnumNames<Enum>::Names[I];
  }
  return Names;
}

/// The enumerator Value names. Throws BadValue.
template <typename Enum>
Enum checkedName(const YAML::Node &Value, const std::string &Key) {
  std::string Name = convertValue<std::string>(Value, Key);
  if (std::optional<Enum> Known = rt::fromName<Enum>(Name))
    return *Known;
  throw BadValue{Key, "is " + quotedValue(Value) + "; it must be " +
                          namesOf<Enum>()};
}

/// The named value at Name; none where the key is absent (an older file).
template <typename Enum>
std::optional<Enum> optionalName(const YamlFields &Node, const char *Name) {
  YAML::Node Value = Node[Name];
  if (!Value || Value.IsNull())
    return std::nullopt;
  return checkedName<Enum>(Value, Node.key(Name));
}

} // namespace skyline

#endif // SKYLINE_YAMLFIELDS_H
