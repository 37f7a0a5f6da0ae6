// ChildProcess: placeholder, being written (supervisor work).
#pragma once
