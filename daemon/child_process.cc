#include "daemon/child_process.h"
