// Conversions between the search's measure types (search/measure.h) and their
// kiln.v1 messages (proto/kiln/v1/measure.proto), shared by the runner pipe
// and the farm. Reading a message validates it: an unknown enum value or an
// implausible timing is std::invalid_argument naming the field.
#pragma once

#include "kiln/v1/measure.pb.h"
#include "search/measure.h"

namespace kiln::rpc {

v1::MeasureStatus ToProto(search::MeasureStatus s);
// Throws std::invalid_argument for MEASURE_STATUS_UNSPECIFIED or an unknown value.
search::MeasureStatus FromProto(v1::MeasureStatus s);

v1::TimingConfig ToProto(const search::TimingConfig& t);
// Fields left at 0 take search::TimingConfig's defaults (a job file may name
// only what it changes); out-of-range values throw std::invalid_argument.
search::TimingConfig FromProto(const v1::TimingConfig& t);

v1::MeasureResult ToProto(const search::MeasureResult& r);
// Throws std::invalid_argument for a bad status, a negative or non-finite
// time, an ok result without times, or a machine_load outside 0..1. An
// absent machine_load is unknown (-1); wide_spread is also set when the
// repeats spread wide (search::IsWideSpread).
search::MeasureResult FromProto(const v1::MeasureResult& r);

}  // namespace kiln::rpc
