// Convenience header: the whole core IR.
#pragma once

#include "ir/buffer.h"
#include "ir/dtype.h"
#include "ir/error.h"
#include "ir/expr.h"
#include "ir/functor.h"
#include "ir/op.h"
#include "ir/prim_func.h"
#include "ir/stmt.h"
