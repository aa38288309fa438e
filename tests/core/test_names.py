"""One table of data-type names (``core.names``): each data type printed one way, read by every name it goes by,
everywhere the package reads one (the Graph builder, the catalogue, the command line, arrays' dtypes)."""
import pytest

from cudnn_backend._bindings.enums import DataType
from cudnn_backend.cli.args import build_parser
from cudnn_backend.core.families._build import as_data_type
from cudnn_backend.core.names import DATA_TYPE_ALIASES, DATA_TYPE_NAMES, data_type_name, default_tensor_name
from cudnn_backend.graph import Graph
from cudnn_backend.tune import catalogue
from cudnn_backend.typed import arrays

SAME = [("fp16", "half", "float16", "CUDNN_DATA_HALF"), ("bf16", "bfloat16", "BF16", "CUDNN_DATA_BFLOAT16"),
        ("fp32", "float", "float32", "CUDNN_DATA_FLOAT"), ("fp64", "double", "float64", "CUDNN_DATA_DOUBLE"),
        ("fp8_e4m3", "fp8", "float8_e4m3fn", "CUDNN_DATA_FP8_E4M3"), ("int8", "INT8", "int8", "CUDNN_DATA_INT8")]


def test_every_data_type_has_one_printed_name_that_reads_back():
    assert set(DATA_TYPE_NAMES) == set(DataType)
    assert len(set(DATA_TYPE_NAMES.values())) == len(DataType)  # one name each, none shared
    for member, name in DATA_TYPE_NAMES.items():
        assert DATA_TYPE_ALIASES[name] is member and as_data_type(name) is member
        assert data_type_name(member) == data_type_name(int(member)) == data_type_name(member.name) == name
    assert list(DATA_TYPE_NAMES.values())[:6] == ["fp16", "bf16", "fp32", "fp8_e4m3", "fp8_e5m2", "int8"]


@pytest.mark.parametrize("names", SAME, ids=lambda n: n[0])
def test_every_reader_takes_every_name_of_a_data_type(names):
    printed, *others = names
    member = DataType[names[-1]]
    parser = build_parser()
    for name in (printed, *others):
        assert as_data_type(name) is member  # the Graph builder's reader
        assert data_type_name(name) == printed
        assert parser.parse_args(["explore", "--dtype", name]).dtype == member.name  # the command line
        assert catalogue._label_of(name) == printed  # the catalogue's labels
        assert Graph("g", io_data_type=name).io_data_type == member
    assert arrays.data_type_of(others[1]) is member  # the array libraries' dtype name


def test_a_name_of_no_data_type_is_refused_everywhere():
    with pytest.raises(ValueError, match="data_type: 'fp17' is not a DataType"):
        as_data_type("fp17")
    with pytest.raises(SystemExit):
        build_parser().parse_args(["explore", "--dtype", "fp17"])
    with pytest.raises(TypeError, match="no cuDNN data type"):
        arrays.data_type_of("fp17")
    assert data_type_name("fp17") == "fp17"  # printed as given: it names nothing


def test_the_default_tensor_name():
    assert (default_tensor_name(3), default_tensor_name(3, True), default_tensor_name(None)) == ("t3", "v3", "tensor")
