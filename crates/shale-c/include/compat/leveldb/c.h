/* <leveldb/c.h> for programs built against Shale without LevelDB's headers:
   installed as <prefix>/include/shale/compat/leveldb/c.h, on the include
   path through `pkg-config --cflags shale`. It declares LevelDB 1.23's C
   API, as implemented by libshale_c. */
#include <shale/c.h>
