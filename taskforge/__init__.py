"""taskforge: verified feature-deletion coding tasks from real, test-heavy repositories."""

from taskforge.errors import Rejected, UserError
from taskforge.generate import Summary, generate
from taskforge.model import GradeResult
from taskforge.tasks import Task, TaskSet, load_tasks

__all__ = ["GradeResult", "Rejected", "Summary", "Task", "TaskSet", "UserError", "generate",
           "load_tasks"]
