import sys

from moecl_verify.cli import main

sys.exit(main())
