"""symweak's intermediate representation: coordinates, fields, terms, equations (SymPy)."""

from ._equation import Equation as Equation
from ._equation import System as System
from ._equation import strong_monomials as strong_monomials
from ._library import function_library as function_library
from ._library import multi_indices as multi_indices
from ._library import polynomial_degree as polynomial_degree
from ._library import polynomial_library as polynomial_library
from ._printing import latex as latex
from ._printing import short as short
from ._products import inner_order as inner_order
from ._products import is_product as is_product
from ._products import normal_form as normal_form
from ._products import product_library as product_library
from ._products import to_weak_terms as to_weak_terms
from ._symbols import DEFAULT_COORDS as DEFAULT_COORDS
from ._symbols import coord as coord
from ._symbols import coord_sort_key as coord_sort_key
from ._symbols import coords as coords
from ._symbols import field as field
from ._symbols import field_name as field_name
from ._symbols import fields_in as fields_in
from ._symbols import is_field as is_field
from ._symbols import validate_coord_name as validate_coord_name
from ._symbols import validate_field_name as validate_field_name
from ._term import Term as Term
from ._term import canonical_factor as canonical_factor
