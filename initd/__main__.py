from initd.cli import main

raise SystemExit(main())
