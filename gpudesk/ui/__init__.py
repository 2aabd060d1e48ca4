"""The desktop app (PySide6 widgets). Only this package and gpudesk.report import Qt."""
